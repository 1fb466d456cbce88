package forkjoin

// The injector is the pool's queue of tasks submitted from outside
// (Execute, Submit, Invoke and their variants), named after crossbeam's
// Injector: one FIFO list per priority level, a worker taking one task per
// take. It keeps the backpressure of WithMaxQueued and the counters Stats
// reports about submissions; the Pool keeps the lifecycle and the workers.
//
// Each level is Vyukov's intrusive multi-producer queue, linked through
// node.next: a submitter swaps its node in as the level's tail (one atomic
// exchange, the point at which the submission is ordered) and then links
// the previous tail to it. Submitters never wait for each other or for a
// worker. Takes are serialized by a try-lock (taking): a worker that finds
// another one taking returns empty-handed, and the one taking wakes a
// sleeper when it leaves tasks behind.
//
// Invariants:
//
//   - Every accepted submission is in exactly one level's list from its
//     tail swap until one take removes it. Root (submitted) nodes are never
//     pushed on a deque, so the injector is the only queue that holds them.
//   - Within a level, takes return nodes in the order of their tail swaps:
//     tasks submitted at one priority are taken in the order their
//     submissions were accepted, globally, across submitting goroutines. A
//     submitter between its swap and its link hides the nodes swapped in
//     after its own until it links (a take then returns nil, never a later
//     node), and then wakes a sleeper (Pool.submitAt).
//   - A take returns the oldest task of the most urgent non-empty level,
//     except that a level passed over by aging (WithPriorityAging)
//     consecutive takes is taken from next (see pick): the oldest task of a
//     level is passed over by at most aging+1 takes of other levels.
//   - A node returned by a take is no longer referenced by the queue: the
//     consumer end has moved past it and its next was linked before it was
//     returned, so no submitter writes to it again (exec nodes are
//     recycled at once).

import (
	"context"
	"fmt"
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

// WithPriorityAging sets how many consecutive takes from more urgent levels
// a waiting lower level lets pass before one of its tasks is taken: with
// aging k, a queued Background task at the head of its level is passed over
// by at most k+1 takes of other levels (k+1 when Normal and Background come
// due at once), so no level starves. k <= 0 disables aging: strict
// priority, under which lower levels wait as long as more urgent tasks are
// queued. The default is DefaultPriorityAging.
func WithPriorityAging(k int) Option { return func(c *config) { c.aging = k; c.agingSet = true } }

// injector is the submission queue; see the top of this file.
type injector struct {
	levels [NumPriorities]queue

	taking atomic.Bool        // the consumers' try-lock: set while a worker takes
	passed [NumPriorities]int // guarded by taking; takes that passed over the level while it was not empty
	aging  int                // immutable after newInjector; 0 means strict priority

	// Written while taking is held only, so Store after Load is exact; read
	// by Stats without it.
	waits     atomic.Uint64 // tasks taken
	waitTotal atomic.Int64  // sum of their queue waits, in nanoseconds
	waitMax   atomic.Int64  // longest queue wait, in nanoseconds

	// WithMaxQueued: one token per submission not yet claimed (started);
	// nil if unbounded. A channel, so that a waiting submitter can also
	// wait for its context and for Close.
	room     chan struct{}
	closedCh <-chan struct{} // the pool's: closed by Close
}

// queue is one priority level: Vyukov's intrusive multi-producer,
// single-consumer queue. It holds its nodes, oldest first, from head (the
// stub or the oldest node) along next to tail.
//
// pushed and taken count the nodes in and out: queued is their difference.
// They are two counters rather than one so that the consumer, which
// alone writes taken, does no read-modify-write on the submitters' line.
type queue struct {
	tail   atomic.Pointer[node] // producers' end: the newest node, or stub
	pushed atomic.Uint64        // nodes pushed, counted before the swap
	_      [48]byte             // tail and pushed are written by every submitter: off the consumer's line
	taken  atomic.Uint64        // nodes taken; written under injector.taking only
	head   *node                // consumer's end; guarded by injector.taking
	stub   node                 // stands in for the last node when the list is empty
}

// queued returns the number of nodes pushed and not taken. taken is read
// first: it never exceeds pushed, and both only grow, so the difference
// is never negative.
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
		v := &q.levels[l]
		v.head = &v.stub
		v.tail.Store(&v.stub)
	}
	return q
}

// waitSample is how many submissions share one timed queue wait: reading
// the clock at push and at take costs about 45 ns per read on the 2-vCPU
// machine of docs/design.md, a fifth of a submitted task's whole cost, so
// the queue wait of every waitSample-th accepted submission of each level
// is timed.
const waitSample = 8

// clockEpoch anchors nanotime: time.Since on a Time with a monotonic
// reading costs one monotonic clock read.
var clockEpoch = time.Now()

// nanotime returns monotonic nanoseconds since clockEpoch.
func nanotime() int64 { return int64(time.Since(clockEpoch)) }

// push appends n, a root node not yet in any list, to level l and gives it
// its computation number, unique since it is the level's count of pushes
// (from 1) times NumPriorities plus the level. The caller has already
// counted it in flight (see Pool.submitAt) and acquired room if the queue
// is bounded.
func (q *injector) push(n *node, l int) {
	v := &q.levels[l]
	k := v.pushed.Add(1)
	n.group = k*NumPriorities + uint64(l)
	n.level = uint8(l)
	n.queuedAt = 0
	if k%waitSample == 0 {
		n.queuedAt = max(nanotime(), 1)
	}
	v.link(n)
}

// submitted returns the number of accepted submissions.
func (q *injector) submitted() uint64 {
	return q.levels[0].pushed.Load() + q.levels[1].pushed.Load() + q.levels[2].pushed.Load()
}

// link appends n at v's tail. Its plain writes to n (and the caller's)
// are published by the swap, which a consumer reaches through prev.next.
func (v *queue) link(n *node) {
	n.next.Store(nil)
	prev := v.tail.Swap(n)
	prev.next.Store(n)
}

// pop removes and returns v's oldest node, or nil if v is empty or its
// oldest node is not linked yet (a submitter is between its swap and its
// link). Called with injector.taking held.
func (v *queue) pop() *node {
	h := v.head
	next := h.next.Load()
	if h == &v.stub {
		if next == nil {
			return nil
		}
		v.head, h = next, next // skip the stub
		next = h.next.Load()
	}
	if next != nil {
		v.head = next
		return h
	}
	if h != v.tail.Load() {
		return nil // a later node is swapped in but not linked yet
	}
	// h is the only node: put the stub behind it, so that the list never
	// runs empty under a submitter's link.
	v.link(&v.stub)
	if next = h.next.Load(); next != nil {
		v.head = next
		return h
	}
	return nil // a submitter swapped in between; its link follows
}

// empty reports whether no task is queued: a worker polling an empty queue
// costs three atomic loads.
func (q *injector) empty() bool {
	return q.levels[0].queued() == 0 && q.levels[1].queued() == 0 && q.levels[2].queued() == 0
}

// len returns the number of queued tasks.
func (q *injector) len() int {
	return int(q.levels[0].queued() + q.levels[1].queued() + q.levels[2].queued())
}

// take removes and returns the next task (see pick), and reports whether
// more tasks remain queued. It returns nil if none is queued, if none is
// linked yet, or if another worker is taking; in the last two cases the
// submitter or the other worker wakes a sleeper for what remains.
func (q *injector) take() (n *node, more bool) {
	if q.empty() || !q.lockTake() {
		return nil, false
	}
	var nonEmpty [NumPriorities]bool
	for l := range q.levels {
		nonEmpty[l] = q.levels[l].queued() > 0
	}
	l := q.pick(nonEmpty)
	if l >= 0 {
		n = q.levels[l].pop()
	}
	for k := 0; n == nil && k < NumPriorities; k++ {
		if nonEmpty[k] && k != l {
			n = q.levels[k].pop() // l's next node is not linked yet: take another level's
		}
	}
	if n != nil {
		v := &q.levels[n.level]
		v.taken.Store(v.taken.Load() + 1) // under taking: no other writer
		if n.queuedAt != 0 {              // a sampled submission: its queue wait, from push to take
			d := max(nanotime()-n.queuedAt, 0)
			q.waits.Store(q.waits.Load() + 1)         // under taking: no other writer
			q.waitTotal.Store(q.waitTotal.Load() + d) // under taking: no other writer
			if d > q.waitMax.Load() {
				q.waitMax.Store(d) // under taking: no other writer
			}
		}
		more = !q.empty()
	}
	q.taking.Store(false)
	return n, more
}

// lockTake acquires taking, spinning while another worker holds it (a
// take is a few dozen instructions) and giving up, reporting false, once
// the queue is empty or a backoff's spins and yields are exhausted (the
// holder may be descheduled): a worker that returned empty-handed would go
// idle and back, which costs more than the wait.
func (q *injector) lockTake() bool {
	var bo park.Backoff
	for !q.taking.CompareAndSwap(false, true) {
		for q.taking.Load() {
			if !bo.Snooze() || q.empty() {
				return false
			}
		}
	}
	return true
}

// pick chooses the level to take from among the non-empty ones, or -1 if
// all are empty, and updates the aging counts: the most urgent non-empty
// level h, unless h has not been passed over aging times and a less
// urgent non-empty level has (the most urgent such level then): of the
// levels that are due, the most urgent goes first. Every non-empty level
// less urgent than the one chosen counts one more pass; the chosen level
// and the empty ones restart at 0. Levels more urgent than the chosen one
// keep their count (they were not passed over for priority).
//
// Bound: a level reaching aging passes is chosen at the next take unless
// a more urgent level is due at the same take; with three levels, Normal
// can be due ahead of Background only once, so the head of a level is
// passed over at most aging+1 times. Called with taking held.
//
// pick counts a pass as decided; if the chosen level's oldest node is not
// linked yet, take takes from another level, and the counts are off by
// that one take.
func (q *injector) pick(nonEmpty [NumPriorities]bool) int {
	h := -1
	for l := range nonEmpty {
		if nonEmpty[l] {
			h = l
			break
		}
	}
	if h < 0 {
		return -1
	}
	chosen := h
	if q.aging > 0 {
		for l := h; l < NumPriorities; l++ {
			if nonEmpty[l] && q.passed[l] >= q.aging {
				chosen = l // the most urgent level that is due
				break
			}
		}
	}
	for l := range nonEmpty {
		switch {
		case !nonEmpty[l] || l == chosen:
			q.passed[l] = 0
		case l > chosen:
			q.passed[l]++
		}
	}
	return chosen
}

// acquireRoom takes a token of a bounded queue for one submission. When
// the queue is full it fails with ErrQueueFull unless wait is set; then it
// waits until ctx (nil: never) is done or the pool closes.
func (q *injector) acquireRoom(ctx context.Context, wait bool, closed *atomic.Bool) error {
	select {
	case q.room <- struct{}{}:
		return nil
	default:
	}
	if closed.Load() {
		return ErrClosed
	}
	if !wait {
		return ErrQueueFull
	}
	select {
	case q.room <- struct{}{}:
		return nil
	case <-q.closedCh:
		return ErrClosed
	case <-doneOf(ctx):
		return ctx.Err()
	}
}

// releaseRoom returns the token of a submission that has started (or was
// rejected after acquiring it) to a bounded queue.
func (q *injector) releaseRoom() {
	if q.room != nil {
		<-q.room
	}
}
