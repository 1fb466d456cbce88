package park

import (
	"flag"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// workerSet runs n goroutines that consume items from a shared counter with
// exactly the protocol a pool worker follows: look for work, back off,
// Prepare, re-check, then Sleep or Cancel.
type workerSet struct {
	s        *Sleepers
	items    atomic.Int64 // published, not yet taken
	consumed atomic.Int64
	sleeping atomic.Int32 // workers past their last re-check, in or entering Sleep
	stop     atomic.Bool
	wg       sync.WaitGroup
	// produce, if set, is called by a worker after taking an item; it lets
	// a test publish work from inside a worker.
	produce func(ws *workerSet, worker int)
}

func (ws *workerSet) take() bool {
	for {
		n := ws.items.Load()
		if n == 0 {
			return false
		}
		if ws.items.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// publish is the producer side: publish the work, then wake a sleeper only
// if Any reports one.
func (ws *workerSet) publish() {
	ws.items.Add(1)
	if ws.s.Any() {
		ws.s.WakeOne()
	}
}

func (ws *workerSet) start(n int) {
	ws.s = New(n)
	for i := 0; i < n; i++ {
		ws.wg.Add(1)
		go ws.run(i)
	}
}

func (ws *workerSet) run(i int) {
	defer ws.wg.Done()
	var bo Backoff
	got := func() {
		ws.consumed.Add(1)
		bo.Reset()
		if ws.produce != nil {
			ws.produce(ws, i)
		}
	}
	for !ws.stop.Load() {
		if ws.take() {
			got()
			continue
		}
		if bo.Snooze() {
			continue
		}
		ws.s.Prepare(i, true)
		if ws.take() {
			ws.s.Cancel(i)
			got()
			continue
		}
		if ws.stop.Load() {
			ws.s.Cancel(i)
			return
		}
		ws.sleeping.Add(1)
		ws.s.Sleep(i)
		ws.sleeping.Add(-1)
		ws.s.Cancel(i)
	}
}

func (ws *workerSet) shutdown() {
	ws.stop.Store(true)
	ws.s.WakeAll()
	ws.wg.Wait()
}

// waitFor polls cond until it holds, failing the test after a generous
// timeout instead of hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// TestNoLostWakeup repeatedly lets every worker fall asleep, then publishes
// one item from outside and checks that it is consumed. Half of the rounds
// publish as soon as every worker has registered (Prepare) and passed its
// re-check, when the last of them may not have reached Sleep yet; the other
// half also wait a random few microseconds, so that both the window between
// re-check and Sleep and a fully blocked Sleep are exercised.
var parkCycles = flag.Int("park.cycles", 0,
	"sleep/wake rounds per worker count in TestNoLostWakeup (default 2000, 200 with -short); "+
		"the long proof is -park.cycles=100000")

func TestNoLostWakeup(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	if *parkCycles > 0 {
		rounds = *parkCycles
	}
	for _, n := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			ws := &workerSet{}
			ws.start(n)
			defer ws.shutdown()
			rng := rand.New(rand.NewSource(int64(n)))
			for r := 1; r <= rounds; r++ {
				waitFor(t, fmt.Sprintf("round %d: all %d workers asleep", r, n), func() bool {
					return ws.sleeping.Load() == int32(n) && ws.s.Count() == n
				})
				if r%2 == 0 {
					time.Sleep(time.Duration(rng.Intn(50)) * time.Microsecond)
				}
				ws.publish()
				waitFor(t, fmt.Sprintf("round %d: item consumed (lost wake-up?)", r), func() bool {
					return ws.consumed.Load() == int64(r)
				})
			}
		})
	}
}

// TestNoLostWakeupRacingProducers publishes from outside while workers are
// in any phase (no waiting for them to sleep), from several producers at
// once, and from inside: every item a worker takes makes it publish another
// until a per-test budget is spent. Every item must be consumed.
func TestNoLostWakeupRacingProducers(t *testing.T) {
	const (
		workers   = 4
		producers = 3
		perProd   = 3000
		inside    = 5000 // items published by workers themselves
	)
	ws := &workerSet{}
	var budget atomic.Int64
	budget.Store(inside)
	ws.produce = func(ws *workerSet, worker int) {
		if budget.Add(-1) >= 0 {
			ws.publish()
		}
	}
	ws.start(workers)
	defer ws.shutdown()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < perProd; i++ {
				ws.publish()
				if rng.Intn(16) == 0 {
					// Let the workers run dry and start falling asleep.
					time.Sleep(time.Duration(rng.Intn(100)) * time.Microsecond)
				}
			}
		}(int64(p))
	}
	wg.Wait()
	const total = producers*perProd + inside
	waitFor(t, "every item consumed (lost wake-up?)", func() bool {
		return ws.consumed.Load() == total
	})
	// Nothing is left over and the workers settle back to sleep.
	waitFor(t, "workers asleep again", func() bool { return ws.sleeping.Load() == workers })
	if got := ws.items.Load(); got != 0 {
		t.Fatalf("%d items left unconsumed", got)
	}
}

// TestNoLostWakeupFromInside lets all workers but one sleep, and has that
// one publish an item for the others while it keeps running: the item must
// be taken by a sleeper it wakes. Repeated for many rounds.
func TestNoLostWakeupFromInside(t *testing.T) {
	const workers = 3
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	ws := &workerSet{}
	// A worker that takes an odd-numbered item publishes the next one
	// itself, so half of the items are published from inside a worker,
	// right after the others went to sleep.
	ws.produce = func(ws *workerSet, worker int) {
		if ws.consumed.Load()%2 == 1 {
			ws.publish()
		}
	}
	ws.start(workers)
	defer ws.shutdown()
	for r := 1; r <= rounds; r++ {
		waitFor(t, fmt.Sprintf("round %d: all workers asleep", r), func() bool {
			return ws.sleeping.Load() == workers
		})
		ws.publish() // item 2r-1, whose taker publishes item 2r
		waitFor(t, fmt.Sprintf("round %d: both items consumed (lost wake-up?)", r), func() bool {
			return ws.consumed.Load() == int64(2*r)
		})
	}
}
