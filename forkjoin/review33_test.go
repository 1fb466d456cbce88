package forkjoin_test

// Review rev33 of batched takes (takebatch.go): how the tasks held in a
// worker's ring meet the rest of the pool (claims by joiners, aging,
// WithMaxQueued, Close, Stats).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestRev33ClaimedRingTaskCostsNoAgingRound: a Submit taken in a batch
// and then claimed by a task joining its Future is no task to run when
// its turn comes in the ring; like a claimed slot of the queue
// (TestRev24ClaimedSlotCostsNoAgingRound), it must not count as a take
// of its level, which restarts that level's aging count and makes the
// task behind it wait another round. One worker, aging 4: b0 takes a
// batch of Background tasks (b0, c1, c2, c3, b2), joins c1-c3 (run
// inline, claimed while in b0's ring), and then 40 Urgent tasks are
// queued. b2 may be passed over by at most 4+1 takes of Urgent.
func TestRev33ClaimedRingTaskCostsNoAgingRound(t *testing.T) {
	const k, urgent, claimed = 4, 40, 3
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	var (
		log  startOrder
		done sync.WaitGroup
	)
	record := log.record
	futs := make(chan []*forkjoin.Future[int], 1)
	joined, gate := make(chan struct{}), make(chan struct{})
	release := holdWorkers(t, p)
	done.Add(2 + urgent)
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(w *forkjoin.Worker) {
		defer done.Done()
		for _, f := range <-futs {
			f.Join(w) // in w's ring: claimed, run here
		}
		close(joined)
		<-gate
	}))
	fs := make([]*forkjoin.Future[int], claimed)
	for i := range fs {
		fs[i] = forkjoin.SubmitPriority(p, forkjoin.Background, func(*forkjoin.Worker) int { record("c"); return i })
	}
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { record("b2"); done.Done() }))
	futs <- fs
	release()
	within(t, "the joins", func() { <-joined })
	require.Equal(t, claimed+1, p.Stats().QueuedBackground, "c1-c3 and b2 in the worker's ring")
	for range urgent {
		require.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { record("U"); done.Done() }))
	}
	close(gate)
	within(t, "the tasks", done.Wait)
	order := log.get()
	require.Len(t, order, claimed+1+urgent, "each claimed task ran once: %v", order)
	passed := 0
	for _, s := range order[claimed:] {
		if s == "b2" {
			break
		}
		passed++
	}
	t.Logf("%d Urgent tasks started ahead of b2: %v", passed, order)
	require.LessOrEqual(t, passed, k+1, "%v", order)
}

// TestRev33RingsUnderLoadStress: three workers (an odd count) take
// batches from a bounded queue (WithMaxQueued 64) while three outside
// submitters queue bursts at random priorities with every kind of
// submission (Execute, ExecuteContext with a deadline, Submit, Invoke),
// and Urgent tasks join the Futures of Normal Submits queued just before
// them (claims of tasks in the queue or in a ring); some tasks Block, so
// that compensating workers take from the rings of blocked owners, and a
// slow-task handler watches the tasks started from rings. Then Close
// races a last burst. Every accepted submission runs exactly once, none
// rejected runs, and at the end no token is held or owed, Stats counts
// nothing queued and as many tasks completed as submitted, and no
// goroutine is left (goleak, in TestMain).
func TestRev33RingsUnderLoadStress(t *testing.T) {
	const submitters, rounds = 3, 200
	var slowReports atomic.Int64
	p := forkjoin.New(forkjoin.WithParallelism(3), forkjoin.WithMaxQueued(64),
		forkjoin.WithPriorityAging(4),
		forkjoin.WithSlowTaskHandler(2*time.Millisecond, func(*forkjoin.Pool, int, time.Duration) { slowReports.Add(1) }))
	var (
		mu       sync.Mutex
		ran      = map[int64]int{}
		accepted = map[int64]bool{}
		nextID   atomic.Int64
		pending  sync.WaitGroup
	)
	prios := []forkjoin.Priority{forkjoin.Urgent, forkjoin.Normal, forkjoin.Background}
	// track returns a new submission's id and body, which counts a run
	// and marks it done; decide records whether it was accepted.
	track := func() (int64, func()) {
		id := nextID.Add(1)
		pending.Add(1)
		return id, func() {
			mu.Lock()
			ran[id]++
			mu.Unlock()
			pending.Done()
		}
	}
	decide := func(id int64, ok bool) {
		mu.Lock()
		accepted[id] = ok
		mu.Unlock()
		if !ok {
			pending.Done()
		}
	}
	submit := func(try func(body func()) bool) {
		id, body := track()
		ok := false
		if v := recoverPanic(func() { ok = try(body) }); v != nil {
			ok = false // Invoke on a closed pool
		}
		decide(id, ok)
	}
	task := func(i int, body func()) func(*forkjoin.Worker) {
		return func(w *forkjoin.Worker) {
			switch i % 7 {
			case 3:
				forkjoin.Block(w, func() { time.Sleep(100 * time.Microsecond) })
			case 5:
				if i%3 == 0 {
					time.Sleep(3 * time.Millisecond)
				}
			}
			body()
		}
	}
	burst := func(s int) {
		rng := rand.New(rand.NewPCG(uint64(s), 33))
		for i := range rounds {
			prio := prios[rng.IntN(3)]
			switch rng.IntN(5) {
			case 0: // a burst of Executes at one level, for batches
				for j := range 12 {
					submit(func(body func()) bool { return p.ExecutePriority(prio, task(i+j, body)) == nil })
				}
			case 1:
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(200))*time.Microsecond)
				for j := range 8 {
					submit(func(body func()) bool {
						return p.ExecuteContextPriority(ctx, prio, task(i+j, body)) == nil
					})
				}
				cancel()
			case 2: // Normal Submits, then an Urgent task joining them
				fs := make([]*forkjoin.Future[int], 10)
				ids := make([]int64, len(fs))
				for j := range fs {
					id, body := track()
					ids[j] = id
					fs[j] = forkjoin.Submit(p, func(w *forkjoin.Worker) int { task(i+j, body)(w); return j })
				}
				submit(func(body func()) bool {
					return p.ExecutePriority(forkjoin.Urgent, func(w *forkjoin.Worker) {
						defer body()
						for j, f := range fs {
							if v := recoverPanic(func() { assert.Equal(t, j, f.Join(w)) }); v != nil {
								assert.ErrorIs(t, v.(error), forkjoin.ErrClosed)
							}
						}
					}) == nil
				})
				for j, f := range fs {
					_, err := f.Get(context.Background())
					if err != nil {
						assert.ErrorIs(t, err, forkjoin.ErrClosed)
					}
					decide(ids[j], err == nil)
				}
			case 3:
				submit(func(body func()) bool {
					_, err := forkjoin.SubmitPriority(p, prio, func(w *forkjoin.Worker) int { task(i, body)(w); return 0 }).Get(context.Background())
					return err == nil
				})
			case 4:
				submit(func(body func()) bool {
					forkjoin.InvokePriority(p, prio, func(w *forkjoin.Worker) int { task(i, body)(w); return 0 })
					return true
				})
			}
		}
	}
	var wg sync.WaitGroup
	phase := func(closing bool) {
		for s := range submitters {
			wg.Add(1)
			go func() { defer wg.Done(); burst(s + 10*btoi(closing)) }()
		}
		if closing {
			time.Sleep(time.Millisecond)
			p.Close()
		}
		within(t, "the submitters", wg.Wait)
		within(t, "every accepted submission", pending.Wait)
	}
	phase(false)
	phase(true)
	closePool(t, p)
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for id, ok := range accepted {
		if ok {
			n++
			require.Equal(t, 1, ran[id], "accepted submission %d", id)
		} else {
			require.Zero(t, ran[id], "rejected submission %d", id)
		}
	}
	s := p.Stats()
	t.Logf("%d submissions, %d accepted; %d slow reports; %v", len(accepted), n, slowReports.Load(), s)
	tokens, owed := forkjoin.RoomOf(p)
	require.Zero(t, tokens)
	require.Zero(t, owed)
	require.Zero(t, s.QueuedUrgent+s.QueuedNormal+s.QueuedBackground)
	require.Equal(t, s.Submitted, s.Completed)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRev33AgingReachesBusyWorkersRing: the head of a level may sit in
// the ring of a busy worker while a free worker's own ring holds younger
// tasks of that level; aging must still start the head after at most
// k+1 takes of other levels (WithPriorityAging). Two workers, aging 4:
// worker A takes a batch of Background tasks (runs a0, keeps a1-a19),
// worker B takes the older half of A's ring (runs a1, which blocks; keeps
// a2-a10), so a2 is the oldest Background task not started, in B's
// ring; then 40 Urgent tasks are queued and a0 returns. A, free, alone
// takes; when Background comes due it started the front of its own ring
// (a11, younger), passing a2 over until its ring was empty.
func TestRev33AgingReachesBusyWorkersRing(t *testing.T) {
	const k, urgent, n = 4, 40, 40
	p := forkjoin.New(forkjoin.WithParallelism(2), forkjoin.WithPriorityAging(k))
	defer closePool(t, p)
	var (
		log  startOrder
		done sync.WaitGroup
	)
	record := log.record
	// Each worker held on a gate of its own, taken one after the other.
	var holds [2]chan struct{}
	for i := range holds {
		holds[i] = make(chan struct{})
		started := make(chan struct{})
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { close(started); <-holds[i] }))
		within(t, "a worker held", func() { <-started })
	}
	a0Runs, a1Runs := make(chan struct{}), make(chan struct{})
	gateA, gateB := make(chan struct{}), make(chan struct{})
	done.Add(n - 2 + urgent)
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { close(a0Runs); <-gateA }))
	require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { close(a1Runs); <-gateB }))
	for i := 2; i < n; i++ {
		require.NoError(t, p.ExecutePriority(forkjoin.Background, func(*forkjoin.Worker) { record(fmt.Sprint("a", i)); done.Done() }))
	}
	close(holds[0]) // A takes a batch: runs a0, keeps a1-a19
	within(t, "a0 started", func() { <-a0Runs })
	close(holds[1]) // B takes the older half of A's ring: runs a1, keeps a2-a10
	within(t, "a1 started", func() { <-a1Runs })
	for range urgent {
		require.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { record("U"); done.Done() }))
	}
	close(gateA)
	within(t, "the tasks but a1", done.Wait)
	close(gateB)
	order := log.get()
	passed := 0
	for _, s := range order {
		if s == "a2" {
			break
		}
		if s == "U" {
			passed++
		}
	}
	t.Logf("%d Urgent tasks started ahead of a2: %v", passed, order)
	require.LessOrEqual(t, passed, k+1, "%v", order)
}

// TestRev33RoomFreedFromBlockedOwnersRing: the tasks of a batch hold
// their WithMaxQueued tokens until they start. On one worker whose batch
// owner waits in Block for an outside submitter that waits for room, the
// compensating worker starts the batch's tasks from the blocked owner's
// ring, which gives their tokens back, so the submitter gets in and the
// wait ends. With no compensating worker (WithMaxBlocked(-1)), an
// ExecuteContext waiting for room gives up at its deadline, and once the
// owner returns every token comes back.
func TestRev33RoomFreedFromBlockedOwnersRing(t *testing.T) {
	for _, spare := range []bool{true, false} {
		t.Run(fmt.Sprint("spare=", spare), func(t *testing.T) {
			opts := []forkjoin.Option{forkjoin.WithParallelism(1), forkjoin.WithMaxQueued(4)}
			if !spare {
				opts = append(opts, forkjoin.WithMaxBlocked(-1))
			}
			p := forkjoin.New(opts...)
			defer closePool(t, p)
			var done sync.WaitGroup
			accepted, ownerBlocks := make(chan struct{}), make(chan struct{})
			release := holdWorkers(t, p)
			done.Add(4)
			require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
				defer done.Done()
				forkjoin.Block(w, func() {
					close(ownerBlocks)
					if spare {
						<-accepted
					} else {
						time.Sleep(20 * time.Millisecond)
					}
				})
			}))
			for range 3 {
				require.NoError(t, p.Execute(func(*forkjoin.Worker) { done.Done() }))
			}
			release() // the worker takes a batch: runs the first, keeps three
			within(t, "the owner in Block", func() { <-ownerBlocks })
			if spare {
				// The queue is full again with one more task: the next
				// submission gets in only once a task of the ring starts.
				done.Add(2)
				require.NoError(t, p.Execute(func(*forkjoin.Worker) { done.Done() }))
				within(t, "room from the blocked owner's ring", func() {
					forkjoin.Submit(p, func(*forkjoin.Worker) int { done.Done(); return 0 })
				})
				close(accepted)
			} else {
				done.Add(1)
				require.NoError(t, p.Execute(func(*forkjoin.Worker) { done.Done() }))
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				defer cancel()
				err := p.ExecuteContext(ctx, func(*forkjoin.Worker) { t.Error("ran") })
				require.ErrorIs(t, err, context.DeadlineExceeded)
			}
			within(t, "the tasks", done.Wait)
			waitUntil(t, "every token back", func() bool { tokens, owed := forkjoin.RoomOf(p); return tokens == 0 && owed == 0 })
		})
	}
}

// TestRev33ShutdownCountsRingTasks: the tasks of a batch held in the ring
// of a worker stuck in Block (no compensating worker) are accepted and
// unfinished: Stats counts them queued, Shutdown with a deadline gives up
// counting them with the blocked one, and once the owner returns, Close
// runs them and the workers exit (goleak, in TestMain).
func TestRev33ShutdownCountsRingTasks(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(-1))
	var ran atomic.Int32
	blocks, gate := make(chan struct{}), make(chan struct{})
	release := holdWorkers(t, p)
	require.NoError(t, p.Execute(func(w *forkjoin.Worker) {
		forkjoin.Block(w, func() { close(blocks); <-gate })
		ran.Add(1)
	}))
	for range 3 {
		require.NoError(t, p.Execute(func(*forkjoin.Worker) { ran.Add(1) }))
	}
	release()
	within(t, "the owner in Block", func() { <-blocks })
	s := p.Stats()
	require.Equal(t, 3, s.QueuedNormal, "%v", s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := p.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "with 4 submitted tasks unfinished")
	close(gate)
	within(t, "Close", p.Close)
	require.Equal(t, int32(4), ran.Load())
	s = p.Stats()
	require.Equal(t, s.Submitted, s.Completed, "%v", s)
	require.Zero(t, s.Queued, "%v", s)
}

// TestRev33OrderBoundThreeWorkers: the order bound K = (P-1)·b with an
// odd number of workers, for b = 1, an odd batch and the default, while
// Urgent tasks, interleaved, make every take of a batch go through the
// lock (and so through oldestBatch): no Normal task starts while more
// than K Normal tasks submitted before it have not.
func TestRev33OrderBoundThreeWorkers(t *testing.T) {
	const submitters, workers = 3, 3
	each := 3000
	for _, batch := range []int{1, 5, forkjoin.DefaultTakeBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			p := forkjoin.New(forkjoin.WithParallelism(workers), forkjoin.WithTakeBatch(batch))
			defer closePool(t, p)
			log := newStartLog(submitters, each, orderBound(workers, batch))
			var done sync.WaitGroup
			done.Add(submitters * each)
			var subs sync.WaitGroup
			for g := range submitters {
				subs.Add(1)
				go func() {
					defer subs.Done()
					for i := range each {
						if i%50 == 0 {
							done.Add(1)
							assert.NoError(t, p.ExecutePriority(forkjoin.Urgent, func(*forkjoin.Worker) { done.Done() }))
						}
						assert.NoError(t, p.Execute(func(*forkjoin.Worker) { log.start(g, i); done.Done() }))
					}
				}()
			}
			within(t, "submitters", subs.Wait)
			within(t, "tasks", done.Wait)
			log.check(t)
		})
	}
}
