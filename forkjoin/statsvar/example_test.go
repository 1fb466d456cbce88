package statsvar_test

import (
	"encoding/json"
	"expvar"
	"fmt"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/forkjoin/statsvar"
)

// Publish a pool's counters under a name; an HTTP server with expvar's
// handler (the default mux's /debug/vars) then serves them as JSON.
func ExamplePublish() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()
	forkjoin.Invoke(pool, func(w *forkjoin.Worker) int { return 0 })

	statsvar.Publish("example_pool", pool)

	var st forkjoin.Stats
	_ = json.Unmarshal([]byte(expvar.Get("example_pool").String()), &st)
	fmt.Println("workers:", st.Workers, "submitted:", st.Submitted)
	// Output: workers: 2 submitted: 1
}
