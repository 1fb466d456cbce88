package forkjoin

// Adversarial tests of the submission queue's block reuse and of its
// lock-free empty check (injector.go: find, retire, mayBeReady), driving
// the injector directly, without a pool, so that the interleavings are the
// test's: a submitter that holds a block it loaded long ago, a slot
// reserved and not written, takers and checkers racing submitters while
// blocks are retired and reused every 64 slots.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// requireAllTaken checks, after an injector stress test, that every slot
// pushed on q was taken (seen) and that q counts total submissions.
func requireAllTaken(t *testing.T, q *injector, seen *[NumPriorities][]atomic.Bool, total int) {
	t.Helper()
	for l := range seen {
		for k := range int(q.levels[l].pushed.Load()) {
			require.True(t, seen[l][k].Load(), "level %d: slot %d never taken", l, k)
		}
	}
	require.EqualValues(t, total, q.submitted())
}

// slotOf is the slot index k of a node taken from level l (see groupOf).
func slotOf(n *node, l int) uint64 { return (n.group-uint64(l))/NumPriorities - 1 }

// checkTaken records the take of x by one taker of the injector stress
// tests, whose last slot taken per level is last, and reports through fail
// a slot taken twice (seen) or out of order within its level.
func checkTaken(x *node, seen [NumPriorities][]atomic.Bool, last *[NumPriorities]int64, fail func(string, ...any)) {
	l := int(x.group % NumPriorities)
	k := slotOf(x, l)
	if seen[l][k].Swap(true) {
		fail("level %d: slot %d taken twice", l, k)
	}
	if int64(k) <= last[l] {
		fail("level %d: slot %d taken after slot %d", l, k, last[l])
	}
	last[l] = int64(k)
}

// blockAt returns block m of v, walking from its head: the test goroutine
// alone uses v, so the walk sees a still queue.
func blockAt(v *queue, m uint64) *block {
	b := v.head.Load()
	for b.num.Load() != m {
		b = b.next.Load()
	}
	return b
}

// TestInjectorFindFromRecycledBlock: a submitter loads the tail (block 0),
// is descheduled, and meanwhile N tasks are pushed and taken, for every N
// up to 10 blocks: block 0 is retired, kept as a spare, reused as a later
// block, retired again. It then reserves slot N and looks for its block
// from the block it loaded: find must return block N/64 whatever became of
// the stale block (a later block, a spare, an earlier or the same block).
// With slot N reserved and not written, every earlier one taken, the
// lock-free check must say the level is not ready (mayBeReady false), and
// a take must return nothing; once the slot is written, it must say ready
// and the take must return it.
func TestInjectorFindFromRecycledBlock(t *testing.T) {
	const l = 1
	recycled := 0
	for n := 0; n < 10*blockCap; n++ {
		if n%blockCap == blockCap/2 {
			continue // the middle slot's submitter links the next block: not done by hand here
		}
		q := newInjector(config{}, nil)
		v := &q.levels[l]
		stale := v.tail.Load()
		for range n {
			q.push(l, nil, &node{})
			x, _ := q.take(nil)
			require.NotNil(t, x, "N=%d", n)
		}
		if testing.Verbose() && n%blockCap == 1 {
			t.Logf("N=%d: stale block num %d", n, stale.num.Load())
		}
		if stale.num.Load() != 0 {
			recycled++
		}
		k := v.pushed.Add(1) - 1 // reserved, as push does, and not written yet
		require.EqualValues(t, n, k)
		m := k / blockCap
		want := blockAt(v, m)
		require.Same(t, want, v.find(stale, m), "N=%d: stale block now num %d", n, stale.num.Load())
		require.False(t, v.mayBeReady(), "N=%d: oldest slot reserved, not written", n)
		x, more := q.take(nil)
		require.Nil(t, x, "N=%d", n)
		require.False(t, more, "N=%d", n)
		// Written as push writes it.
		nd := &node{group: groupOf(k, l)}
		want.slots[k%blockCap].n = nd
		want.slots[k%blockCap].seq.Store(k + 1)
		require.True(t, v.mayBeReady(), "N=%d: oldest slot written", n)
		x, _ = q.take(nil)
		require.Same(t, nd, x, "N=%d", n)
	}
	require.Greater(t, recycled, 0, "block 0 was never recycled: the test does not test reuse")
}

// TestInjectorMayBeReadyExactUnderReuse: 3 submitters push 200,000 tasks
// (30,000 under the race detector) at random levels, never more than 96
// queued, so that every level's queue spans two or three blocks and blocks
// are retired and reused all the time; 2 takers take them; a checker calls
// mayBeReady in a loop. Oracles:
//   - the checker: if every slot of a level below W was written before the
//     call (W, the level's watermark, computed before it) and taken was
//     below W after it, the oldest slot was ready throughout the call, so
//     mayBeReady must report true: false there is the lost wake-up a
//     worker would sleep through;
//   - each taker: a take that returns nothing while some level's
//     watermark, read before the take, exceeds its taken count read after
//     is a lost task for a worker about to sleep;
//   - every task is taken exactly once, and each taker sees each level's
//     slots in increasing order (takes return slots in index order).
func TestInjectorMayBeReadyExactUnderReuse(t *testing.T) {
	const submitters, takers, checkers, window = 3, 2, 4, 96
	total := 200_000
	if testenv.Race {
		total = 30_000
	}
	q := newInjector(config{}, nil)
	var ready, seen [NumPriorities][]atomic.Bool
	var wm [NumPriorities]atomic.Uint64 // the checker's watermarks, published for the takers
	for l := range ready {
		ready[l] = make([]atomic.Bool, total)
		seen[l] = make([]atomic.Bool, total)
	}
	var issued, takenAll atomic.Int64
	var failed atomic.Bool
	fail := func(format string, args ...any) {
		if failed.CompareAndSwap(false, true) {
			t.Errorf(format, args...)
		}
	}
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := uint64(g)*0x9E3779B97F4A7C15 + 1
			for issued.Add(1) <= int64(total) && !failed.Load() {
				for q.len() >= window && !failed.Load() {
					runtime.Gosched()
				}
				rng ^= rng << 13
				rng ^= rng >> 7
				rng ^= rng << 17
				l := int(rng % NumPriorities)
				n := &node{}
				q.push(l, nil, n)
				ready[l][slotOf(n, l)].Store(true)
			}
		}()
	}
	for range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [NumPriorities]int64
			for l := range last {
				last[l] = -1
			}
			for takenAll.Load() < int64(total) && !failed.Load() {
				var w0 [NumPriorities]uint64
				for l := range w0 {
					w0[l] = wm[l].Load()
				}
				x, _ := q.take(nil)
				if x == nil {
					for l := range w0 {
						if t1 := q.levels[l].taken.Load(); w0[l] > t1 {
							fail("level %d: take returned nothing with slots below %d written before it and taken %d after", l, w0[l], t1)
						}
					}
					runtime.Gosched()
					continue
				}
				checkTaken(x, seen, &last, fail)
				takenAll.Add(1)
			}
		}()
	}
	// Each checker keeps its own watermarks; checker 0 publishes its own
	// for the takers. Several checkers, so that some are descheduled in
	// the middle of mayBeReady while the takers retire the block it reads.
	var heads [checkers]map[*block]bool
	var checks, falses atomic.Int64
	for c := range checkers {
		heads[c] = map[*block]bool{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w [NumPriorities]uint64
			var nc, nf int64
			for takenAll.Load() < int64(total) && !failed.Load() {
				for l := range w {
					for w[l] < uint64(total) && ready[l][w[l]].Load() {
						w[l]++
					}
					if c == 0 {
						wm[l].Store(w[l])
					}
					v := &q.levels[l]
					r := v.mayBeReady()
					t1 := v.taken.Load()
					nc++
					if !r {
						nf++
						if w[l] > t1 {
							fail("level %d: mayBeReady false with slots below %d written before the call and taken %d after", l, w[l], t1)
						}
					}
					if len(heads[c]) < 1<<16 {
						heads[c][v.head.Load()] = true
					}
				}
				if nc%(64*NumPriorities) == 0 {
					runtime.Gosched() // let the takers and submitters run on 2 CPUs
				}
			}
			checks.Add(nc)
			falses.Add(nf)
		}()
	}
	testenv.Within(t, "submitters, takers and checkers", wg.Wait)
	if failed.Load() {
		return
	}
	requireAllTaken(t, q, &seen, total)
	blocks := total/blockCap + 3
	t.Logf("%d checks, %d false; %d distinct head blocks for at least %d blocks' worth of slots", checks.Load(), falses.Load(), len(heads[0]), blocks)
	require.Less(t, len(heads[0]), blocks/2, "blocks were not reused: the test does not test reuse")
}

// TestInjectorTrimSparesUnderReuse: 2 submitters push bursts of 2,400
// tasks at random levels (each level's backlog spans about 12 blocks), 2
// takers drain each burst before the next (so the takers retire a burst's
// blocks into the spare slots and the next burst's installs take them
// back), while a trimmer empties the spare slots beyond nSparesIdle in a
// loop (trimSpares, as a worker going to sleep does). Every task is taken
// exactly once, each taker sees each level's slots in increasing order,
// and the trimmer did drop blocks (else the test tests nothing).
func TestInjectorTrimSparesUnderReuse(t *testing.T) {
	const submitters, takers, burst = 2, 2, 2400
	rounds := 60
	if testenv.Race {
		rounds = 12
	}
	total := rounds * burst
	q := newInjector(config{}, nil)
	var seen [NumPriorities][]atomic.Bool
	for l := range seen {
		seen[l] = make([]atomic.Bool, total)
	}
	var takenAll, dropped atomic.Int64
	var failed, done atomic.Bool
	fail := func(format string, args ...any) {
		if failed.CompareAndSwap(false, true) {
			t.Errorf(format, args...)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the trimmer
		defer wg.Done()
		for !done.Load() && !failed.Load() {
			dropped.Add(int64(q.trimSpares()))
			runtime.Gosched()
		}
	}()
	for range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [NumPriorities]int64
			for l := range last {
				last[l] = -1
			}
			for takenAll.Load() < int64(total) && !failed.Load() {
				x, _ := q.take(nil)
				if x == nil {
					runtime.Gosched()
					continue
				}
				checkTaken(x, seen, &last, fail)
				takenAll.Add(1)
			}
		}()
	}
	var barrier sync.WaitGroup
	for g := range submitters {
		wg.Add(1)
		barrier.Add(1)
		go func() {
			defer wg.Done()
			rng := uint64(g)*0x9E3779B97F4A7C15 + 1
			for r := range rounds {
				for range burst / submitters {
					rng ^= rng << 13
					rng ^= rng >> 7
					rng ^= rng << 17
					l := int(rng % NumPriorities)
					q.push(l, nil, &node{})
				}
				// Wait until this round is drained by the takers.
				for takenAll.Load() < int64((r+1)*burst) && !failed.Load() {
					runtime.Gosched()
				}
			}
			barrier.Done()
		}()
	}
	go func() { barrier.Wait(); done.Store(true) }()
	testenv.Within(t, "submitters, takers and the trimmer", wg.Wait)
	if failed.Load() {
		return
	}
	requireAllTaken(t, q, &seen, total)
	t.Logf("%d spare blocks dropped by the trimmer", dropped.Load())
	require.Positive(t, dropped.Load(), "the trimmer never found a spare beyond nSparesIdle: the test does not test trimming")
}
