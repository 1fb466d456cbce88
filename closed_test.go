package magpie

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestHelpersRacingClose: every helper of runnerCalls, on a pool that
// another goroutine closes at a random moment, never panics and returns
// the open pool's result (runnerCalls checks it), called from outside
// with the *Pool, from a task with its *Worker (or, once the pool refuses
// the task, from outside), and from the body of a ForW on the pool with
// the Runner ForW hands it (the closed pool itself for the indices the
// caller runs). A pool closed between a helper's look at it
// (parallelism) and its first submission refuses that task, and the
// caller runs the work (refuse.Run). On 2bbbbe3 a call that found the
// pool closed panicked with forkjoin.ErrClosed.
func TestHelpersRacingClose(t *testing.T) {
	rounds := 10
	if testenv.Race || testing.Short() {
		rounds = 3
	}
	var names []string
	for name := range runnerCalls(t, 0) {
		names = append(names, name)
	}
	slices.Sort(names)
	for round := range rounds {
		p := forkjoin.New(forkjoin.WithParallelism(2))
		closeAfter := time.Duration(rand.IntN(30000)) * time.Microsecond
		testenv.Concurrently(t, "helpers racing Close", 4, func(g int) {
			if g == 3 {
				time.Sleep(closeAfter)
				p.Close()
				return
			}
			for _, n := range []int{100, 5000} {
				for _, opts := range [][]Option{nil, {Grain(16)}} {
					calls := runnerCalls(goT{t}, n, opts...)
					where := fmt.Sprintf("round %d (Close after %v) n=%d grain=%v", round, closeAfter, n, opts != nil)
					run := func(r forkjoin.Runner, name string) {
						if v := recoverValue(func() { calls[name](r) }); v != nil && v != errGoTFailed {
							t.Errorf("%s: %s from %T panicked: %v", where, name, r, v)
						}
					}
					// Goroutines 0, 1 and 2 call from outside, from a
					// task's *Worker and from a ForW body.
					v := callFromEverywhere(p, []int{callOutside, callWorker, callForW}[g], names, run)
					if v != nil {
						t.Errorf("%s: goroutine %d panicked: %v", where, g, v)
					}
				}
			}
		})
		if t.Failed() {
			return
		}
	}
}

// Where callFromEverywhere calls a helper from: outside the pool with the
// *Pool, inside a task with its *Worker, inside a task with the *Pool,
// and from a ForW body with the Runner ForW hands it.
const (
	callOutside = iota
	callWorker
	callPoolInTask
	callForW
)

// callFromEverywhere calls run(r, name) for each name in names from where
// (one of the constants above), on p, which a Close may be racing: a task
// that p refuses (Invoke's own ErrClosed, raw, having run nothing) makes
// the calls from outside instead. It returns what panicked out of the task
// or the ForW around the calls, nil if nothing did. Shared by the tests of
// helpers racing Close (TestHelpersRacingClose,
// TestRev29HelpersRacingCloseRunEachIndexOnce).
func callFromEverywhere(p *forkjoin.Pool, where int, names []string, run func(r forkjoin.Runner, name string)) any {
	switch where {
	case callOutside:
		for _, name := range names {
			run(p, name)
		}
	case callWorker, callPoolInTask:
		v := recoverValue(func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
				var r forkjoin.Runner = w
				if where == callPoolInTask {
					r = p
				}
				for _, name := range names {
					run(r, name)
				}
				return struct{}{}
			})
		})
		if v != forkjoin.ErrClosed {
			return v
		}
		for _, name := range names {
			run(p, name)
		}
	case callForW:
		return recoverValue(func() {
			ForW(p, len(names), func(r forkjoin.Runner, i int) { run(r, names[i]) }, Grain(1))
		})
	}
	return nil
}
