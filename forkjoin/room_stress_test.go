package forkjoin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMaxQueuedRoomStress (review rev19): outside submitters of every
// kind (Submit and Get, Invoke, Execute, ExecuteContext with a done
// context) and tasks submitting to their own full pool (Execute, Submit
// joined at once, Then stages) on a queue of room 3, then a Close racing
// submitters. Every accepted submission runs exactly once, every rejected
// one never, and once all is done no token is held and nothing is owed:
// the room invariant (room.go) held through claims by takes and by joins,
// rejections, and Close.
func TestMaxQueuedRoomStress(t *testing.T) {
	const (
		submitters = 3
		rounds     = 150
	)
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithMaxQueued(3))
	var (
		mu       sync.Mutex
		ran      = map[int64]int{}
		accepted = map[int64]bool{}
		nextID   atomic.Int64
		pending  sync.WaitGroup
	)
	record := func(id int64) {
		mu.Lock()
		ran[id]++
		mu.Unlock()
	}
	// submit runs one submission of id through try, which reports whether
	// it was accepted; the body counts a run and marks it done.
	submit := func(try func(id int64, body func()) bool) {
		id := nextID.Add(1)
		pending.Add(1)
		ok := false
		// A join of a submission rejected by Close panics with ErrClosed
		// (the body never ran): rejected.
		if v := recoverPanic(func() { ok = try(id, func() { record(id); pending.Done() }) }); v != nil {
			ok = false
		}
		mu.Lock()
		accepted[id] = ok
		mu.Unlock()
		if !ok {
			pending.Done()
		}
	}
	// own is a task body submitting to its own pool, past the bound.
	var maxOwed atomic.Int64
	own := func(w *forkjoin.Worker) {
		submit(func(id int64, body func()) bool {
			return p.Execute(func(*forkjoin.Worker) { body() }) == nil
		})
		if _, o := forkjoin.RoomOf(p); o > maxOwed.Load() {
			maxOwed.Store(o) // a sample, for the log
		}
		submit(func(id int64, body func()) bool {
			forkjoin.Submit(p, func(*forkjoin.Worker) int { body(); return 0 }).Join(w)
			return true
		})
		submit(func(id int64, body func()) bool {
			f := forkjoin.Submit(p, func(*forkjoin.Worker) int { return 1 })
			g := forkjoin.Then(p, f, func(_ *forkjoin.Worker, v int) int { body(); return v })
			return g.Join(w) == 1
		})
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	phase := func(closing bool) {
		for s := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					switch (i + s) % 5 {
					case 0:
						submit(func(id int64, body func()) bool {
							_, err := forkjoin.Submit(p, func(w *forkjoin.Worker) int { own(w); body(); return 0 }).Get(context.Background())
							return err == nil || !errors.Is(err, forkjoin.ErrClosed)
						})
					case 1:
						submit(func(id int64, body func()) bool {
							return recoverPanic(func() {
								forkjoin.Invoke(p, func(w *forkjoin.Worker) int { own(w); body(); return 0 })
							}) == nil
						})
					case 2:
						submit(func(id int64, body func()) bool {
							return p.Execute(func(w *forkjoin.Worker) { time.Sleep(50 * time.Microsecond); body() }) == nil
						})
					case 3:
						submit(func(id int64, body func()) bool {
							return p.ExecuteContext(done, func(w *forkjoin.Worker) { body() }) == nil
						})
					case 4:
						submit(func(id int64, body func()) bool {
							return p.ExecuteContext(context.Background(), func(w *forkjoin.Worker) { own(w); body() }) == nil
						})
					}
				}
			}()
		}
		if closing {
			p.Close()
		}
		within(t, "the submitters", wg.Wait)
	}
	check := func() {
		within(t, "every accepted submission", pending.Wait)
		mu.Lock()
		defer mu.Unlock()
		for id, ok := range accepted {
			if ok {
				require.Equal(t, 1, ran[id], "accepted submission %d ran %d times", id, ran[id])
			} else {
				require.Zero(t, ran[id], "rejected submission %d ran", id)
			}
		}
		n := 0
		for _, ok := range accepted {
			if ok {
				n++
			}
		}
		t.Logf("%d submissions, %d accepted, owed up to %d", len(accepted), n, maxOwed.Load())
		waitUntil(t, "room given back", func() bool { tokens, owed := forkjoin.RoomOf(p); return tokens == 0 && owed == 0 })
	}
	phase(false)
	check()
	phase(true)
	check()
	closePool(t, p)
}
