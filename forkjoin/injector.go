package forkjoin

// The injector is the pool's queue of tasks submitted from outside
// (Execute, Submit, Invoke and their variants), named after crossbeam's
// Injector: one FIFO queue per priority level, a worker taking one task per
// take. It keeps the backpressure of WithMaxQueued and the counters Stats
// reports about submissions; the Pool keeps the lifecycle and the workers.
//
// Each level is an unbounded array of slots in linked blocks of blockCap,
// as crossbeam's Injector is: a submitter reserves the next slot with one
// fetch-and-add on the level's pushed counter (the point at which the
// submission is ordered), writes its task into the slot and marks it ready.
// Execute's function goes into the slot itself, and blocks are reused
// (see retire), so an Execute allocates nothing once the queue has reached
// its everyday size. Takes are serialized
// by a try-lock (taking): the worker holding it reads the slot at the
// level's taken count once it is ready.
//
// Invariants:
//
//   - Slot k of a level (counting from 0) is in block k/blockCap, and is
//     written by the one submitter whose fetch-and-add returned k. Block m
//     is linked from block m-1 by the submitter of the middle slot of block
//     m-1, half a block ahead of need (submitters of block m that get there
//     first wait for it), and made the tail by the submitter of its first
//     slot: the tail is block m only once slot m*blockCap is reserved.
//   - Within a level, takes return slots in index order: tasks submitted at
//     one priority are taken in the order of their reservations, that is,
//     in the order the submissions were accepted, globally, across
//     submitting goroutines. A reserved slot not yet ready holds back the
//     later ones (a take returns nil, never a later task); its submitter
//     marks it ready and then wakes a sleeper (Pool.submitAt).
//   - A take returns the oldest task of the most urgent non-empty level,
//     except that a level passed over by aging (WithPriorityAging)
//     consecutive takes is taken from next (see pick): the oldest task of a
//     level is passed over by at most aging+1 takes of other levels.
//   - Root (submitted) nodes are never pushed on a deque: the injector is
//     the only queue that holds them. A submission a worker joining its
//     Future has claimed (started) ahead of its turn is taken and dropped
//     as soon as it is at the front of its level (dropClaimed, peek), so
//     that such joins do not pile completed tasks up in the queue, and no
//     take counts it (aging, queue waits). Once taken, a slot's contents are
//     never read again. A block the takers have left, once it is not the
//     tail, is retired (its slots and link reset) and reused by a later
//     install, up to nSpares per level (nSparesIdle once a worker has
//     gone to sleep: trimSpares), else freed by the GC. Goroutines
//     that loaded it earlier (submitters walking to their block, takers
//     looking without the lock) read its num before and after what they
//     read in it: num changes, for good, before anything in it is reset
//     (see block.num, queue.find, queue.mayBeReady), so none of them acts
//     on a value of a recycled block.

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/internal/park"
)

// Priority is the urgency of a task submitted from outside the pool. When
// tasks of several levels wait in the submission queue, a worker takes
// Urgent ones before Normal ones before Background ones, FIFO within a
// level, except that aging (WithPriorityAging) keeps a lower level from
// starving. The zero value is Normal. Priorities order only the submission
// queue: a running task is never preempted, and the tasks it forks run as
// any forked task does.
type Priority int8

const (
	// Background is for work that may wait while the pool is busy: a
	// queued Background task starts after queued Normal and Urgent ones
	// (but for aging).
	Background Priority = -1
	// Normal is the priority of Execute, Submit and Invoke.
	Normal Priority = 0
	// Urgent is for work that must not wait behind a backlog: a queued
	// Urgent task starts before every queued Normal and Background one
	// (but for aging).
	Urgent Priority = 1
)

// NumPriorities is the number of priority levels.
const NumPriorities = 3

// DefaultPriorityAging is the aging of a pool without WithPriorityAging.
const DefaultPriorityAging = 32

// String returns "Urgent", "Normal" or "Background".
func (p Priority) String() string {
	switch p {
	case Urgent:
		return "Urgent"
	case Normal:
		return "Normal"
	case Background:
		return "Background"
	}
	return fmt.Sprintf("Priority(%d)", int(p))
}

// level maps a priority to its list: 0 is the most urgent.
func (p Priority) level() int {
	if p < Background || p > Urgent {
		panic(fmt.Sprintf("forkjoin: %v is not Urgent, Normal or Background", p))
	}
	return int(Urgent - p)
}

// injector is the submission queue; see the top of this file.
//
// Layout: the fields every submitter reads (room, aging), those every
// submitter writes (each level's tail and pushed), those every take writes
// (taking, passed, each level's taken and head) and the queue-wait counters
// are on separate cache lines (the pads), so that a take does not steal the
// line a submitter is about to write, nor the reverse.
type injector struct {
	// Read-only after newInjector.
	aging int // 0 means strict priority
	// WithMaxQueued: one token per submission not yet claimed (started);
	// nil if unbounded. A channel, so that a waiting submitter can also
	// wait for its context and for Close.
	room     chan struct{}
	closedCh <-chan struct{} // the pool's: closed by Close
	// WithMaxQueued: submissions of the pool's own workers accepted past
	// the bound, each owed a token (room.go). Written only while the
	// queue is full.
	owed atomic.Int64

	levels [NumPriorities]queue

	taking atomic.Bool // the consumers' try-lock: set while a worker takes
	locks  uint64      // times taking was acquired; guarded by it (a count for tests: TakeLocks)
	_      [linePad]byte
	// passed counts the takes that passed over each level while it was
	// not empty; written under taking only, and only when a count changes
	// (account), atomics so that take's batch path can see that all are 0
	// without the lock (noPasses). Off taking's line, which every locked
	// take writes: in the common case this line is never written.
	passed [NumPriorities]atomic.Int32
	_      [linePad]byte
}

// linePad is the gap that keeps fields written by different goroutines on
// different cache lines: two 64-byte lines, the gap the deque and the
// Worker use, so that a CPU that prefetches the adjacent line does not
// pull in the neighbour's fields either.
const linePad = 128

// blockCap is the number of slots per block: a block (2,128 bytes, 33 per
// slot, since slots grew to 32 bytes with seq; TestRev24BlockSize) is allocated
// once per blockCap submissions.
const blockCap = 64

// slot holds one submitted task: act for Execute, else n. A slot is 32
// bytes (TestRev24BlockSize).
type slot struct {
	// act is Execute's function (a funcAction) or a typed Execute's
	// action (exectask.go), or nil; n is the submitted node (Submit,
	// Invoke), or nil for Execute. Both are plain: the submitter of the
	// slot writes them before it stores seq, takers read them after
	// loading seq, and clear them (clearSlots) under injector.taking once
	// the slot is taken; nobody else reads them.
	act spawnAction
	n   *node
	// seq is k+1 once the slot's submitter has written it as slot k of
	// its level (global position): storing it publishes act and n. A
	// block's slots keep the seq of its previous life when it is reused
	// (retire): positions only grow, so an old seq is smaller than k+1
	// and reads as "not written yet", with no reset.
	seq atomic.Uint64
}

// block is blockCap consecutive slots of a level.
type block struct {
	slots [blockCap]slot
	// queuedAt[i] is the nanotime at push of slot i*waitSample+waitSample-1,
	// the timed one of its group (see waitSample); written by its
	// submitter before it publishes the slot, read by its taker after
	// loading the slot's seq (pop), as act and n are.
	queuedAt [blockCap / waitSample]int64
	next     atomic.Pointer[block] // block num+1, installed by the submitter of its middle slot
	// num is the block's position (it holds slots num*blockCap on), or
	// retiredNum while it is retired (see queue.retire). It changes only
	// from a position to retiredNum and from retiredNum to a position
	// larger than any the level has used: a goroutine that read a block's
	// num and reads the same value again knows the block was not recycled
	// in between.
	num atomic.Uint64
}

// retiredNum is the num of a retired block: larger than any position.
const retiredNum = 1 << 63

// queue is one priority level; see the top of this file.
//
// pushed and taken count the slots reserved and taken: queued is their
// difference. The consumer alone writes taken, so it does no
// read-modify-write on the submitters' line.
type queue struct {
	_      [linePad]byte
	tail   atomic.Pointer[block] // the newest installed block
	pushed atomic.Uint64         // slots reserved: the next submission reserves slot pushed
	_      [linePad]byte         // tail and pushed are written by every submitter: off the consumers' line
	taken  atomic.Uint64         // slots taken; written under injector.taking only
	// next is the takers' own count of slots taken, guarded by
	// injector.taking: pop advances it, and unlockTake publishes it to
	// taken once per take however many slots the take moved (one store,
	// a full barrier, instead of one per slot).
	next uint64
	// head is the block holding slot taken, or the block before it until
	// the next peek moves it on; written under injector.taking only, read
	// without it by mayBeReady.
	head atomic.Pointer[block]
	// spares are retired blocks, reset, that the next installs reuse
	// instead of allocating; put by a taker (retire), taken by the
	// submitter that installs the next block (push). Single slots, each
	// taken with one swap: no ABA as a lock-free stack would have.
	spares [nSpares]atomic.Pointer[block]
	// left is the block the head left last, waiting to be retired: when
	// the head leaves a block, that block is usually still the tail (the
	// takers are right behind the submitters), which may not be retired;
	// a block later it no longer is. Guarded by injector.taking.
	left *block
}

// queued returns the number of slots reserved and not taken. taken is
// read first: it never exceeds pushed, and both only grow, so the
// difference is never negative.
func (v *queue) queued() uint64 {
	t := v.taken.Load()
	return v.pushed.Load() - t
}

func newInjector(c config, closedCh <-chan struct{}) *injector {
	q := &injector{aging: DefaultPriorityAging, closedCh: closedCh}
	if c.agingSet {
		q.aging = max(c.aging, 0)
	}
	if c.maxQueued > 0 {
		q.room = make(chan struct{}, c.maxQueued)
	}
	for l := range q.levels {
		b := &block{}
		q.levels[l].head.Store(b)
		q.levels[l].tail.Store(b)
	}
	return q
}

// waitSample is how many submissions share one timed queue wait. Reading
// the clock at every push and take was a large share of the CPU profile of
// BenchmarkSubmit1M (measured in docs/design.md, "Submissions",
// Observability), so the queue wait of every waitSample-th accepted
// submission of each level is timed.
const waitSample = 8

// clockEpoch anchors nanotime: time.Since on a Time with a monotonic
// reading costs one monotonic clock read.
var clockEpoch = time.Now()

// nanotime returns monotonic nanoseconds since clockEpoch.
func nanotime() int64 { return int64(time.Since(clockEpoch)) }

// groupOf is the computation number (node.group) of slot k of level l:
// unique, and never 0 (which means none).
func groupOf(k uint64, l int) uint64 { return (k+1)*NumPriorities + uint64(l) }

// push queues a task at level l: act (Execute) if n is nil, else the root
// node n, which it gives its computation number before publishing it. The
// caller has already counted it in flight (see Pool.submitAt) and acquired
// room if the queue is bounded.
func (q *injector) push(l int, act spawnAction, n *node) (backlog bool) {
	v := &q.levels[l]
	// Load the tail before reserving: the tail is block j only once slot
	// j*blockCap has been reserved, so the slot reserved next is in the
	// tail block or after it.
	b := v.tail.Load()
	k := v.pushed.Add(1) - 1
	m := k / blockCap
	b = v.find(b, m)
	switch k % blockCap {
	case 0:
		v.advanceTail(b, m)
	case blockCap / 2:
		// Install the next block now, half a block ahead, so that nobody
		// waits for an allocation at the block's end. Only this submitter
		// writes b.next. A retired block is reused if there is one.
		nb := v.takeSpare()
		if nb == nil {
			nb = &block{}
		}
		nb.num.Store(m + 1)
		b.next.Store(nb)
		// Once per block, look at the level's backlog (taken is the
		// takers' line: read it only here).
		backlog = k-v.taken.Load() > backlogYield
	}
	i := k % blockCap
	s := &b.slots[i]
	if k%waitSample == waitSample-1 {
		b.queuedAt[i/waitSample] = max(nanotime(), 1)
	}
	if n != nil {
		n.group = groupOf(k, l)
		s.n = n
	} else {
		s.act = act
	}
	s.seq.Store(k + 1) // publishes the writes above, and n's
	return backlog
}

// backlogYield is the backlog of a level beyond which a submitter yields
// its P (runtime.Gosched) once per block it installs, after publishing its
// task: see Pool.submitAt.
const backlogYield = 4096

// find returns block m, walking from b, a block loaded from the tail or
// the head. The block holding a slot reserved and not yet written is never
// retired, so block m stays block m; but b, loaded earlier, may have been
// retired and reused since (see retire), which its num shows: a block
// beyond m, or retired, sends the walk back to the head, which is at or
// before block m (the slot reserved is not taken yet). A walk from a block
// whose num it has read follows next pointers to num+1, num+2, ..., and
// rereads each num, so a block recycled under it only sends it back to the
// head again; once the takes reach slot m*blockCap the head stays put and
// the walk ends.
func (v *queue) find(b *block, m uint64) *block {
	var bo park.Backoff
	for {
		num := b.num.Load()
		if num == m {
			return b
		}
		if num > m {
			b = v.head.Load()
			continue
		}
		next := b.next.Load()
		if next == nil {
			// Block num+1 is being linked by the submitter of the middle
			// slot of b, which reserved it at least blockCap/2 slots before
			// this one (or b was just retired: its num says so next time).
			if !bo.Snooze() {
				runtime.Gosched()
			}
			continue
		}
		b = next
	}
}

// advanceTail makes b, block m, the tail unless a later block already is:
// the installers of consecutive blocks may get here out of order. The tail
// is reloaded after its num is read: the tail is never retired (see
// retire), so a tail that moved meanwhile may be a retired block, and
// then this looks again.
func (v *queue) advanceTail(b *block, m uint64) {
	for {
		t := v.tail.Load()
		num := t.num.Load()
		if v.tail.Load() != t {
			continue
		}
		if num >= m || v.tail.CompareAndSwap(t, b) {
			return
		}
	}
}

// retire resets b, a block whose slots have all been taken and that the
// head has left, for reuse by a later install (crossbeam's Injector frees
// such a block; magpie keeps one per level, so that a steady stream of
// submissions allocates nothing). The tail is never retired: a new
// submission may load it. Other goroutines may still hold b: submitters
// that loaded it before (find) and takers looking without the lock
// (mayBeReady). Its num is set to retiredNum before its slots are reset,
// so each of them, rereading num after reading a slot or a next pointer,
// can tell a reset value from a real one. Called with injector.taking
// held (only takes retire blocks).
//
// It reports false if b is still the tail, and true if it retired b or
// dropped it (to the GC) because a spare is there already.
func (v *queue) retire(b *block) bool {
	if v.tail.Load() == b {
		return false
	}
	free := -1
	for i := range v.spares {
		if v.spares[i].Load() == nil {
			free = i
			break
		}
	}
	if free < 0 {
		return true // left to the GC
	}
	// The slots need no reset: act and n are nil already (peek cleared
	// them when the head left b), each seq is older than any position the
	// block will hold (see slot.seq), and queuedAt is rewritten by the
	// submitter of each timed slot before it is read.
	b.num.Store(retiredNum)
	b.next.Store(nil)
	v.spares[free].Store(b) // only takes fill a slot, under taking: it is still empty (others only empty slots)
	return true
}

// nSpares is the number of retired blocks a level keeps for reuse: with
// a backlog, the submitters install blocks while the takers are still
// blocks behind, so the first retires come after many installs; the
// spares then cover the difference between the two rates. A submitter
// yields once the backlog passes backlogYield (Pool.submitAt), so a
// backlog of that size, backlogYield/blockCap blocks plus a margin, is
// the usual one: with that many spares, a backlog that comes and goes at
// that size reuses its blocks instead of allocating them
// (TestBacklogReusesBlocks). When a worker goes to sleep with nothing to
// run, each level is cut back to nSparesIdle spares (trimSpares), so that
// a pool that had a backlog once does not keep 100 KB per level for life.
const (
	nSpares     = backlogYield/blockCap + 8
	nSparesIdle = 4
)

// trimSpares drops every spare block of v beyond the first nSparesIdle
// slots, to the GC. Any goroutine may call it: it only empties slots, as
// takeSpare does, each with one swap, so a block is still taken by one
// goroutine at most, and retire's "a slot found empty stays empty" holds.
// It returns the number of blocks dropped.
func (v *queue) trimSpares() (dropped int) {
	for i := nSparesIdle; i < nSpares; i++ {
		if v.spares[i].Load() != nil && v.spares[i].Swap(nil) != nil {
			dropped++
		}
	}
	return dropped
}

// trimSpares trims every level's spares (see nSpares) and drops the
// functions of taken slots (dropTaken), and returns the number of blocks
// dropped. A worker calls it before it sleeps with nothing to run.
func (q *injector) trimSpares() (dropped int) {
	q.lockTake()
	for l := range q.levels {
		q.levels[l].dropTaken()
	}
	q.unlockTake()
	for l := range q.levels {
		dropped += q.levels[l].trimSpares()
	}
	return dropped
}

// takeSpare returns a retired block to install, or nil if none is kept.
func (v *queue) takeSpare() *block {
	for i := range v.spares {
		if v.spares[i].Load() != nil {
			if b := v.spares[i].Swap(nil); b != nil {
				return b
			}
		}
	}
	return nil
}

// peek returns the block holding v's oldest slot if that slot is ready,
// else nil (v is empty, or its oldest slot is reserved but not written
// yet). It reads the slot, not pushed: the line of pushed, written by
// every submitter, stays theirs. Called with injector.taking held.
//
// A ready oldest slot holding a submission already claimed (run by a
// worker joining its Future ahead of its turn, Future.joinOther) is popped
// here, and the next one looked at: it is no task to run, so no take
// counts it (pick's aging, which counted it as a take of its level and
// so made the tasks behind it wait a whole aging round more:
// TestRev24ClaimedSlotCostsNoAgingRound), no queue wait is recorded for
// it (it started when claimed: TestRev24ClaimedSlotNotTimed), and it
// leaves the queue as soon as it is at the front (dropClaimed). claimed
// only grows (Pool.claim); a claim made after this look is found by the
// taker's own claim (Worker.execute), which skips the task.
func (v *queue) peek() *block {
	for {
		k := v.next
		b := v.head.Load()             // live: only takes retire blocks, the head last
		if b.num.Load() < k/blockCap { // the first slot of the next block
			nb := b.next.Load()
			if nb == nil {
				return nil // not installed yet
			}
			v.head.Store(nb)
			clearSlots(b, blockCap) // every slot of b is taken
			if v.left != nil && v.retire(v.left) {
				v.left = nil
			}
			if v.left == nil {
				v.left = b
			} // else b is left to the GC
			b = nb
		}
		s := &b.slots[k%blockCap]
		if s.seq.Load() != k+1 {
			return nil // reserved, not written yet
		}
		// Every node in a slot is a submission's (Pool.submitAt),
		// claimable; an Execute's slot has none.
		if s.n == nil || !s.n.claimed.Load() {
			return b
		}
		v.pop(b) // claimed: see above
	}
}

// pop takes v's oldest slot, in b (returned by peek), and returns its
// contents and index. Called with injector.taking held.
func (v *queue) pop(b *block) (act spawnAction, n *node, queuedAt int64, k uint64) {
	k = v.next
	i := k % blockCap
	s := &b.slots[i]
	act, n = s.act, s.n
	if k%waitSample == waitSample-1 {
		queuedAt = b.queuedAt[i/waitSample]
	}
	// Nobody reads the slot's contents again (see the top of this file),
	// but pop leaves them in the slot until the head leaves the block or a
	// worker goes to sleep (clearSlots): clearing them here wrote to the
	// cache line the submitter of the next slots was writing, and the
	// store of taken below, a full barrier, waited for that line (17% of
	// BenchmarkSubmit1M's CPU at two Ps; docs/design.md, Submission costs).
	v.next = k + 1 // published to taken by unlockTake
	return act, n, queuedAt, k
}

// clearSlots drops the contents of b's first j slots, all taken, so that
// the GC may have the functions and nodes they hold. Called with
// injector.taking held: only takers read act and n, and only of a slot
// not taken yet; the submitters wrote these slots before publishing them
// and never write them again in this life of b (see retire). Their seq
// stays: a goroutine looking without the lock (mayBeReady, with a stale
// taken) reads only seq.
func clearSlots(b *block, j int) {
	for i := range j {
		s := &b.slots[i]
		s.act, s.n = nil, nil
	}
}

// dropTaken drops the contents of the taken slots of v's head block (see
// clearSlots), so that an idle pool keeps no function or node it has run.
// Called with injector.taking held.
func (v *queue) dropTaken() {
	k := v.next
	b := v.head.Load()
	switch b.num.Load() {
	case k / blockCap:
		clearSlots(b, int(k%blockCap))
	case k/blockCap - 1: // the head has not moved on yet: all of b is taken
		clearSlots(b, blockCap)
	}
}

// mayBeReady reports whether v's oldest slot may be ready, without the
// takers' lock, reading only lines the submitters do not write (taken,
// head) and the slot itself; not pushed, which every submitter writes.
// false is exact: at the instant of the slot's load, v's oldest slot was
// not ready (v was empty, or its oldest slot reserved and not written), so
// that a worker that finds every level so after registering as a sleeper
// may sleep (the submitter of that slot marks it ready, then wakes a
// sleeper). true may be stale; take then looks again under the lock.
//
// Why false is exact: taken is loaded first as k, head after it, as b.
// When loaded, b was the block of some taken value no smaller than k, or
// the block before it, so its num was at least m-1 (m = k/blockCap); b may
// have been retired and reused since, which changes its num for good (see
// block.num), so every conclusion below is checked by rereading b's num.
// If b is block m-1 and its next is nil while it still is block m-1, block
// m was not linked, so slot k (whose submitter writes it only after finding
// block m) was not ready. If b is block m and slot k's seq is not k+1
// while b still is block m, slot k was not ready; taken moves past k only after
// slot k is ready, so slot k was the oldest. Any other num (a later block,
// or retired) means that takes went on meanwhile: true.
func (v *queue) mayBeReady() bool {
	k := v.taken.Load()
	b := v.head.Load()
	m := k / blockCap
	num := b.num.Load()
	if num+1 == m { // num is never retiredNum here: retiredNum+1 exceeds any position
		nb := b.next.Load()
		if nb == nil {
			return b.num.Load() != num
		}
		b, num = nb, nb.num.Load()
	}
	if num != m {
		return true
	}
	if b.slots[k%blockCap].seq.Load() == k+1 {
		return true
	}
	return b.num.Load() != m
}

// empty reports whether no task is queued, exactly: a worker that finds it
// empty after registering to sleep will be woken by the next submission
// (see internal/park). It stops at the first non-empty level, most urgent
// first.
func (q *injector) empty() bool {
	for l := range q.levels {
		if q.levels[l].queued() != 0 {
			return false
		}
	}
	return true
}

// len returns the number of queued tasks.
func (q *injector) len() int {
	return int(q.levels[0].queued() + q.levels[1].queued() + q.levels[2].queued())
}

// submitted returns the number of accepted submissions.
func (q *injector) submitted() uint64 {
	return q.levels[0].pushed.Load() + q.levels[1].pushed.Load() + q.levels[2].pushed.Load()
}

// take removes the next submitted task for worker w (see choose) and
// returns its node (for Execute's function, one of w's exec nodes, see
// Worker.execNode), and reports whether more tasks are ready: left in the
// queue, put in w's ring by this take (a batch, or half of another's), or
// left in the ring a steal took from: the steal may have been the one
// that a wake-up for those tasks reached, and the woken workers wake the
// next one in turn (Pool.pollSubmission; TestRev31StealPassesWakeUpOn).
// Tasks that were in w's own ring before do not count: w was awake since
// it put them there, and the sleeper woken then is woken for them. The tasks
// it chooses among are the oldest of each level and, ahead of their
// level's, the tasks of a batch taken earlier (takebatch.go): those of
// w's own ring when it pops that without the lock, else, under the lock,
// those of the ring whose front is the oldest (oldestBatch), w's own or
// another worker's. A Submit found claimed in a ring is dropped, not
// returned. It returns nil only if none
// is queued or held in a ring, or if the oldest of each level is reserved
// but not ready yet (its submitter wakes a sleeper once it is), so that a
// worker that finds nothing here after registering as a sleeper may
// sleep. w is nil only in the queue's own tests.
func (q *injector) take(w *Worker) (x *node, more bool) {
	src, rl := w.batchSource()
	for src != nil && src == w && q.onlyLevel(rl) && q.noPasses() {
		// w's own batch's level is the only one with tasks (the queue's
		// own tasks of that level are younger than the batch's), and no
		// aging count is set: choose would pick the batch's level, and
		// account change nothing, so no lock is needed. Only w writes its
		// ring's level, so the level read is that of the tasks popped.
		// Tasks left in w's ring do not count as more (see above).
		if x = w.subs.Pop(); x != nil {
			return x, false
		}
		// Emptied meanwhile by thieves: look at the other rings again.
		// Giving up here would let a worker that looks after registering
		// as a sleeper sleep while another ring holds tasks, whose owner
		// may be busy for long: the wake-up of their fill is spent.
		src, rl = w.batchSource()
	}
	// A steal from another worker's ring takes the lock (review rev32):
	// outside it, a thief that read the ring's level could find the ring
	// emptied and refilled from another level before its steal, and put
	// those tasks in its ring under the old level; and a steal between
	// its compare-and-swap and its ring's tail store holds tasks that are
	// in no ring, which a fill's look at the rings (ringsHoldOther)
	// missed, so that a second level entered the rings. Under the lock
	// every move into a ring is serialized with the fills: the rings hold
	// one level at a time by construction (takebatch.go).
	if src == nil && !q.levels[0].mayBeReady() && !q.levels[1].mayBeReady() && !q.levels[2].mayBeReady() {
		return nil, false
	}
	q.lockTake()
	var (
		heads    [NumPriorities]*block
		nonEmpty uint8 // bit l: level l's oldest slot is ready
	)
	for l := range q.levels {
		heads[l] = q.levels[l].peek()
		if heads[l] != nil {
			nonEmpty |= 1 << l
		}
	}
	if w != nil && w.pool.workers[0].takeBatch > 1 { // else no ring ever holds a task
		// The ring to serve and its level again, now that no fill can
		// change them (fills are under the lock, a steal carries the
		// level). Read before the wait for the lock, the level may be
		// that of tasks since run, the ring refilled from another level,
		// and choose would then start a task of that other level as one
		// of the stale level's, ahead of more urgent queued ones
		// (TestRev32TakeRereadsRingLevelUnderLock). The ring is the one
		// whose front is the oldest (oldestBatch), not w's own first, so
		// that a take that chooses the rings' level starts the head of
		// that level, which aging's bound is about
		// (TestRev33AgingReachesBusyWorkersRing).
		// Rings seen empty before the wait may have been filled since:
		// their level, counted empty, lost its aging count
		// (TestRev33TakeLooksAtRingsUnderLock).
		o, ol := w.oldestBatch()
		switch {
		case o == nil:
			src, rl = nil, -1
		case nonEmpty&^(1<<ol) == 0 && q.noPasses():
			// The rings' level alone has tasks and no count is set: the
			// choice and the counts are known, and which task of the
			// level starts first is free within the order bound, as for
			// the owners' pops without the lock. w serves the ring it
			// looked at, its own or a random other (batchSource, again),
			// so that thieves spread, or, if it saw none, takes from the
			// queue: serving a ring there, half a ring per steal instead
			// of a batch, took up to twice the take locks of
			// TestBacklogTakenInBatches.
			if src != nil {
				src, rl = w.batchSource()
			} else if nonEmpty == 0 {
				src, rl = o, ol
			}
		default:
			src, rl = o, ol
		}
	}
	var l int
	var candidates uint8
	var (
		victim *Worker // the other worker whose ring this take stole from, if any
		into   bool    // and whether that steal was into w's empty ring
	)
	for {
		candidates = nonEmpty
		if src != nil {
			candidates |= 1 << rl
		}
		if l = q.choose(candidates); l < 0 {
			q.unlockTake()
			return nil, false
		}
		if src != nil && l == rl {
			// The batch goes first: it is older than the queue's tasks
			// of its level.
			if src != w {
				victim = src
				into = into || w.subs.Len() == 0 // a steal into w's empty ring
			}
			x = w.takeBatched(src)
			if x != nil && x.claimedRoot() {
				// Claimed in the ring by a worker joining its Future,
				// which ran it: no task, and no take, as for a claimed
				// slot of the queue (peek): counted by account, it
				// restarted its level's aging count, and the task behind
				// it waited another round (TestRev33ClaimedRingTaskCostsNoAgingRound).
				// Dropped; choose again.
				x = nil
			}
			if x != nil {
				q.account(candidates, l)
				q.unlockTake()
				return x, nonEmpty != 0 || w.stoleMore(victim, into)
			}
			src, rl = w.oldestBatch() // emptied meanwhile, or its task claimed: another ring, or none, and choose again
			continue
		}
		q.account(candidates, l)
		break
	}
	v := &q.levels[l]
	act, x, queuedAt, k := v.pop(heads[l])
	if x == nil && w != nil {
		x = w.execNode(act, groupOf(k, l))
	}
	var (
		batch [maxTakeBatch - 1]*node
		// Claimed slots skipped on the way (peek) can make more than one
		// in waitSample of the batch timed: room for every one.
		timed  [maxTakeBatch - 1]int64
		nb, nt int
	)
	if want := w.batchWanted(v.pushed.Load()-v.next, candidates, l); want > 0 {
		// The rest of the batch goes to w's ring, which is empty, where
		// the other workers can take it (takebatch.go).
		for nb < want {
			b := v.peek()
			if b == nil {
				break
			}
			act, y, qa, k := v.pop(b)
			if y == nil {
				y = w.execNode(act, groupOf(k, l))
			}
			batch[nb] = y
			nb++
			if qa != 0 {
				timed[nt] = qa
				nt++
			}
		}
	}
	heads[l] = v.peek()
	more = nb > 0 || heads[0] != nil || heads[1] != nil || heads[2] != nil || w.stoleMore(victim, into)
	if nb > 0 {
		// Under the lock, as batchWanted's look at the rings: rings never
		// hold two levels at once (takebatch.go).
		w.fillBatch(l, batch[:nb])
	}
	q.unlockTake()
	if w == nil { // the queue's own tests
		return x, more
	}
	if queuedAt != 0 || nt > 0 {
		// After the take, outside taking: the other workers are not
		// held off while the clock is read. A batch's queue waits end
		// at its take (docs/design.md, "Batched takes").
		now := nanotime()
		if queuedAt != 0 {
			w.waits.add(now - queuedAt)
		}
		for _, qa := range timed[:nt] {
			w.waits.add(now - qa)
		}
	}
	return x, more
}

// dropClaimed removes, from the front of each level, the slots of submitted
// tasks already claimed (started) by a worker joining their Future, as the
// takes would (peek drops them). A task that submits to its own pool and
// joins the Future at once runs the submission inline while it is still
// queued; without this its slot stayed in the queue until a worker next
// took from it, so that a loop of such submissions on a busy pool grew the
// queue without bound, past WithMaxQueued (which counts the tasks not
// started), holding every completed submission, and Stats counted them as
// queued (TestJoinedSubmissionsLeaveTheQueue). Only the front is trimmed:
// a claimed slot behind an unclaimed one stays until the takes reach it,
// and then leaves without counting as a take (peek). Called by the joining
// worker after its claim (Future.joinOther).
func (q *injector) dropClaimed() {
	q.lockTake()
	for l := range q.levels {
		q.levels[l].peek()
	}
	q.unlockTake()
}

// lockTake acquires taking, spinning while another worker holds it (a
// take is a few dozen instructions), then yielding, since the holder may
// be descheduled. It never gives up: a take that reported "empty" because
// the lock was held would let a worker that re-checks before sleeping
// sleep with a ready task queued and nobody left to wake it
// (TestTakeContentionDoesNotLoseWakeup).
func (q *injector) lockTake() {
	var bo park.Backoff
	for !q.taking.CompareAndSwap(false, true) {
		for q.taking.Load() {
			if !bo.Snooze() {
				runtime.Gosched() // let a descheduled holder run
			}
		}
	}
	q.locks++ // under taking
}

// unlockTake publishes each level's taken count (see queue.next) and
// releases taking.
func (q *injector) unlockTake() {
	for l := range q.levels {
		v := &q.levels[l]
		if v.taken.Load() != v.next {
			v.taken.Store(v.next) // under taking: no other writer
		}
	}
	q.taking.Store(false)
}

// choose chooses the level to take from among the non-empty ones (bit l
// of nonEmpty set for level l), or -1 if all are empty: the most urgent
// non-empty level h, unless h has not been passed over aging times and a
// less urgent non-empty level has (the most urgent such level then): of
// the levels that are due, the most urgent goes first. account then
// updates the counts for the take made. Called with taking held.
//
// Bound: a level reaching aging passes is chosen at the next take unless
// a more urgent level is due at the same take; with three levels, Normal
// can be due ahead of Background only once, so the head of a level is
// passed over at most aging+1 times.
//
// A level whose oldest slot is reserved but not ready yet counts as empty
// for this take: its submitter is about to mark it ready, and wakes a
// sleeper then.
func (q *injector) choose(nonEmpty uint8) int {
	if nonEmpty == 0 {
		return -1
	}
	h := bits.TrailingZeros8(nonEmpty) // the most urgent non-empty level
	if q.aging > 0 && nonEmpty&(nonEmpty-1) != 0 {
		for l := h; l < NumPriorities; l++ {
			if nonEmpty&(1<<l) != 0 && int(q.passed[l].Load()) >= q.aging {
				return l // the most urgent level that is due
			}
		}
	}
	return h
}

// account updates the aging counts for a take from level chosen among the
// non-empty levels of nonEmpty: every non-empty level less urgent than
// the one chosen counts one more pass; the chosen level and the empty ones
// restart at 0. Levels more urgent than the chosen one keep their count
// (they were not passed over for priority). Called with taking held.
func (q *injector) account(nonEmpty uint8, chosen int) {
	for l := range NumPriorities {
		c := &q.passed[l]
		switch {
		case nonEmpty&(1<<l) == 0 || l == chosen:
			if c.Load() != 0 {
				c.Store(0) // only when set: in the common case the line stays clean
			}
		case l > chosen:
			c.Store(c.Load() + 1)
		}
	}
}

// pick is choose and account in one: the level a take from the non-empty
// levels of nonEmpty takes from, or -1.
func (q *injector) pick(nonEmpty uint8) int {
	l := q.choose(nonEmpty)
	if l >= 0 {
		q.account(nonEmpty, l)
	}
	return l
}

// onlyLevel reports whether no level but l holds a task: exact at the
// instant of each level's loads (queued), and cheap: it reads only the
// lines of idle levels, which nobody writes.
func (q *injector) onlyLevel(l int) bool {
	for i := range q.levels {
		if i != l && q.levels[i].queued() != 0 {
			return false
		}
	}
	return true
}

// noPasses reports whether every aging count is 0, so that a take from a
// level alone non-empty changes none (take's path for a batch).
func (q *injector) noPasses() bool {
	return q.passed[0].Load() == 0 && q.passed[1].Load() == 0 && q.passed[2].Load() == 0
}

// tryRoom takes a token of a bounded queue for one submission if one is
// free, and reports whether it did.
func (q *injector) tryRoom() bool {
	select {
	case q.room <- struct{}{}:
		return true
	default:
		return false
	}
}

// awaitRoom blocks until it takes a token of a bounded queue, ctx (nil:
// never) is done, or the pool closes.
func (q *injector) awaitRoom(ctx context.Context) error {
	select {
	case q.room <- struct{}{}:
		return nil
	case <-q.closedCh:
		return ErrClosed
	case <-doneOf(ctx):
		return ctx.Err()
	}
}

// releaseRoom gives back the room of a submission that has started (or was
// rejected after acquiring it) to a bounded queue: a submission accepted
// past the bound first, so that the queue is full again only once it holds
// fewer than its bound (room.go). With owed at 0, every accepted
// submission not yet given back holds a token, this one included, so the
// receive does not block.
func (q *injector) releaseRoom() {
	if q.room == nil {
		return
	}
	for o := q.owed.Load(); o > 0; o = q.owed.Load() {
		if q.owed.CompareAndSwap(o, o-1) {
			return
		}
	}
	<-q.room
}
