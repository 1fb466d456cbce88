package forkjoin_test

// Review rev24: the external submission path (injector.go, submit.go,
// typed.go, exectask.go, room.go) attacked from outside, every kind of
// submission at once, with Close racing the submitters.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// rev24State is what the tasks of one round of TestRev24SubmitCloseRace
// record.
type rev24State struct {
	ran      []atomic.Int32 // per outside submission id
	torn     atomic.Int64   // typed actions whose two words did not match
	logs     [forkjoin.NumPriorities]*startLog
	inner    atomic.Int64 // inner submissions (from tasks) accepted
	innerRan atomic.Int64
}

// rev24Pair is a typed Execute action of three words: not pointer-shaped,
// so it rides in a recycled box (exectask.go). id and chk are written
// together by the submitter; a box reused while a worker still read it
// would show a chk that is not ^id.
type rev24Pair struct {
	id, chk int64
	run     *func()
}

func (a rev24Pair) Compute(*forkjoin.Worker) {
	if a.chk != ^a.id {
		panic(fmt.Sprintf("torn typed action: id %d chk %d", a.id, a.chk))
	}
	(*a.run)()
}

// rev24Ptr is a pointer-shaped typed action: it goes into the slot as
// itself.
type rev24Ptr struct{ run func() }

func (a *rev24Ptr) Compute(*forkjoin.Worker) { a.run() }

// TestRev24SubmitCloseRace: over many pools (1-3 workers, unbounded or
// WithMaxQueued 1-5, aging 1-4 or the default), 4 goroutines submit at
// random priorities with Execute, ExecuteContext, Submit, SubmitContext,
// typed Execute (boxed and pointer-shaped) and Invoke, and some tasks
// submit to their own pool (Execute, and Submit joined at once) while
// Close (in one round of 4 Shutdown with a 1ms deadline, then Close)
// races them. Oracles:
//   - every submission reported accepted runs exactly once, every one
//     reported rejected never runs (counts per submission, checked after
//     Close);
//   - per submitter and priority, no task starts while more than K
//     accepted before it have not started (the bound K = (P-1)·b of
//     "Ordering guarantee"; startLog): P-1 in the rounds with
//     WithTakeBatch(1) (one in two), (P-1)·32 in the others;
//   - a typed action's words are never torn;
//   - after Close: no room token held and nothing owed, every Queued*
//     count 0, Completed equals Submitted.
func TestRev24SubmitCloseRace(t *testing.T) {
	rounds := 60
	if testenv.Race {
		rounds = 25
	}
	const submitters, each = 4, 1500
	prios := [...]forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
	for r := range rounds {
		rng := rand.New(rand.NewSource(int64(r)))
		par := 1 + r%3
		opts := []forkjoin.Option{forkjoin.WithParallelism(par),
			forkjoin.WithPanicHandler(func(pe *forkjoin.PanicError) { t.Errorf("round %d: panic in a task: %v", r, pe.Value) })}
		bounded := r%3 != 0
		if bounded {
			opts = append(opts, forkjoin.WithMaxQueued(1+rng.Intn(5)))
		}
		if r%2 == 0 {
			opts = append(opts, forkjoin.WithPriorityAging(1+rng.Intn(4)))
		}
		batch := forkjoin.DefaultTakeBatch
		if r%4 < 2 {
			batch = 1
		}
		opts = append(opts, forkjoin.WithTakeBatch(batch))
		p := forkjoin.New(opts...)
		st := &rev24State{ran: make([]atomic.Int32, submitters*each)}
		for l := range st.logs {
			st.logs[l] = newStartLog(submitters, each, orderBound(par, batch))
		}
		var acceptedN atomic.Int64
		accepted := make([]atomic.Bool, submitters*each)
		closeAfter := int64(rng.Intn(submitters * each))
		var wg sync.WaitGroup
		var finished atomic.Int32
		for g := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer finished.Add(1)
				grng := rand.New(rand.NewSource(int64(r*submitters + g)))
				var seq [forkjoin.NumPriorities]int
				for i := range each {
					id := g*each + i
					li := grng.Intn(forkjoin.NumPriorities)
					prio := prios[li]
					n := seq[li]
					body := func(w *forkjoin.Worker) {
						st.logs[li].start(g, n)
						st.ran[id].Add(1)
						if w != nil && id%7 == 0 {
							// Submissions of the pool's own task: past the
							// bound (owed), one joined at once (claimed
							// while queued: dropClaimed).
							if p.Execute(func(*forkjoin.Worker) { st.innerRan.Add(1) }) == nil {
								st.inner.Add(1)
							}
							f := forkjoin.SubmitPriority(p, prio, func(*forkjoin.Worker) int { st.innerRan.Add(1); return 1 })
							if v := recoverPanic(func() { f.Join(w) }); v == nil {
								st.inner.Add(1)
							}
						}
						if id%11 == 0 {
							runtime.Gosched()
						}
					}
					var err error
					switch kind := grng.Intn(7); kind {
					case 0:
						err = p.ExecutePriority(prio, func(w *forkjoin.Worker) { body(w) })
					case 1:
						err = p.ExecuteContextPriority(context.Background(), prio, func(w *forkjoin.Worker) { body(w) })
					case 2:
						f := forkjoin.SubmitPriority(p, prio, func(w *forkjoin.Worker) int { body(w); return 0 })
						if grng.Intn(2) == 0 {
							_, err = f.Get(context.Background())
						} else if f.Done() {
							// Not waited for otherwise: a rejected Submit is
							// done at once; an accepted one runs before
							// Close returns.
							_, err = f.Get(context.Background())
						}
					case 3:
						if prio != forkjoin.Normal { // SubmitContext is Normal only
							err = p.ExecutePriority(prio, func(w *forkjoin.Worker) { body(w) })
							break
						}
						f := forkjoin.SubmitContext(context.Background(), p, func(w *forkjoin.Worker) int { body(w); return 0 })
						_, err = f.Get(context.Background())
					case 4:
						fn := func() { body(nil) }
						err = forkjoin.ExecuteTaskPriority(p, prio, rev24Pair{int64(id), ^int64(id), &fn})
					case 5:
						err = forkjoin.ExecuteTaskPriority(p, prio, &rev24Ptr{func() { body(nil) }})
					case 6:
						if v := recoverPanic(func() {
							forkjoin.InvokePriority(p, prio, func(w *forkjoin.Worker) int { body(w); return 0 })
						}); v != nil {
							err, _ = v.(error)
							if err == nil {
								panic(v)
							}
						}
					}
					if err == nil {
						accepted[id].Store(true)
						seq[li]++
						acceptedN.Add(1)
						continue
					}
					if errors.Is(err, forkjoin.ErrClosed) {
						return
					}
					if !assert.ErrorIs(t, err, forkjoin.ErrQueueFull) {
						return
					}
				}
			}()
		}
		for acceptedN.Load() < closeAfter && finished.Load() < submitters {
			runtime.Gosched()
		}
		if r%4 == 3 {
			// Shutdown with a deadline first: it gives up or returns, and
			// the Close after it waits for the rest.
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			if err := p.Shutdown(ctx); err != nil {
				require.ErrorIs(t, err, context.DeadlineExceeded, "round %d", r)
			}
			cancel()
		}
		within(t, fmt.Sprintf("round %d: Close racing submitters", r), p.Close)
		within(t, fmt.Sprintf("round %d: submitters", r), wg.Wait)
		for id := range st.ran {
			want := int32(0)
			if accepted[id].Load() {
				want = 1
			}
			require.Equal(t, want, st.ran[id].Load(), "round %d: submission %d (accepted %v)", r, id, accepted[id].Load())
		}
		for l := range st.logs {
			st.logs[l].check(t)
		}
		require.Equal(t, st.inner.Load(), st.innerRan.Load(), "round %d: inner submissions", r)
		tokens, owed := forkjoin.RoomOf(p)
		require.Zero(t, tokens, "round %d: room tokens held after Close", r)
		require.Zero(t, owed, "round %d: owed after Close", r)
		s := p.Stats()
		require.Zero(t, s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground, "round %d: %v", r, s)
		require.Equal(t, s.Submitted, s.Completed, "round %d: %v", r, s)
	}
}

// TestRev24StatsCompletedNotAboveSubmitted: Stats read Submitted (the
// queue's reservations) before Completed (the workers' counts), so a task
// submitted and completed between the two reads was counted completed and
// not submitted: a snapshot with more tasks completed than submitted. A
// goroutine streams tiny Executes (paced, so that the queue stays short
// and tasks complete right after their submission) to 2 workers while the
// test reads Stats in a loop: Completed must never exceed Submitted, nor
// the queued submissions by level (QueuedUrgent, QueuedNormal,
// QueuedBackground) the total Queued, which counts them too.
func TestRev24StatsCompletedNotAboveSubmitted(t *testing.T) {
	n := 300_000
	if testenv.Race {
		n = 30_000
	}
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	var ran atomic.Int64
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		for i := range n {
			for int64(i)-ran.Load() > 16 {
				runtime.Gosched()
			}
			if err := p.Execute(func(*forkjoin.Worker) { ran.Add(1) }); err != nil {
				panic(err)
			}
		}
	}()
	worst, snaps, queued := forkjoin.Stats{}, 0, ""
	within(t, "the stream", func() {
		for running := true; running; {
			select {
			case <-stop:
				running = false
			default:
			}
			s := p.Stats()
			snaps++
			if s.Completed > s.Submitted && s.Completed-s.Submitted > worst.Completed-worst.Submitted {
				worst = s
			}
			if s.Queued < s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground {
				queued = s.String()
			}
		}
	})
	t.Logf("%d snapshots", snaps)
	require.LessOrEqual(t, worst.Completed, worst.Submitted, "a snapshot: %v", worst)
	require.Empty(t, queued, "Queued below the sum of the levels")
}
