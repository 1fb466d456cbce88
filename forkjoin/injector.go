package forkjoin

// The injector is the pool's queue of tasks submitted from outside
// (Execute, Submit, Invoke and their variants), named after crossbeam's
// Injector: one FIFO list per priority level, a worker taking one task per
// take. It keeps the backpressure of WithMaxQueued and the counters Stats
// reports about submissions; the Pool keeps the lifecycle and the workers.
//
// Invariants:
//
//   - Every accepted submission is in exactly one level's list from push
//     until one take removes it; node.next links the list and is nil
//     outside it. Root (submitted) nodes are never pushed on a deque, so
//     the injector is the only queue that holds them.
//   - Within a level, takes return nodes in push order: tasks submitted at
//     one priority are taken in the order their submissions were accepted
//     (the order in which push acquired mu), globally, across submitting
//     goroutines.
//   - A take returns the oldest task of the most urgent non-empty level,
//     except that a non-empty level passed over by aging (WithPriorityAging)
//     consecutive takes is taken from next (see pick): the oldest task of a
//     level is passed over by at most aging+1 takes of other levels.
//
// Everything in the lists and the aging counts is guarded by mu, a short
// critical section (a few pointer moves) on both sides. The counters that
// Stats reads are atomics written only under mu (so a Load and a Store are
// enough, with no read-modify-write), and read without it.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
	mu     sync.Mutex
	heads  [NumPriorities]*node // guarded by mu; oldest task of each level
	tails  [NumPriorities]*node // guarded by mu; newest task of each level
	passed [NumPriorities]int   // guarded by mu; takes that passed over the level while it was not empty
	seq    uint64               // guarded by mu; numbers the computations (node.group), 0 is none
	aging  int                  // immutable after newInjector; 0 means strict priority

	// Written under mu only, so Store after Load is exact; read by Stats
	// and by empty without mu.
	queued    [NumPriorities]atomic.Int64
	submitted atomic.Uint64 // accepted submissions, equal to seq
	waits     atomic.Uint64 // tasks taken
	waitTotal atomic.Int64  // sum of their queue waits, in nanoseconds
	waitMax   atomic.Int64  // longest queue wait, in nanoseconds

	// WithMaxQueued: one token per submission not yet claimed (started);
	// nil if unbounded. A channel, so that a waiting submitter can also
	// wait for its context and for Close.
	room     chan struct{}
	closedCh <-chan struct{} // the pool's: closed by Close
}

func newInjector(c config, closedCh <-chan struct{}) *injector {
	q := &injector{aging: DefaultPriorityAging, closedCh: closedCh}
	if c.agingSet {
		q.aging = max(c.aging, 0)
	}
	if c.maxQueued > 0 {
		q.room = make(chan struct{}, c.maxQueued)
	}
	return q
}

// clockEpoch anchors nanotime: time.Since on a Time with a monotonic
// reading costs one monotonic clock read.
var clockEpoch = time.Now()

// nanotime returns monotonic nanoseconds since clockEpoch.
func nanotime() int64 { return int64(time.Since(clockEpoch)) }

// push appends n, a root node not yet in any list, to its level and gives
// it its computation number. The caller has already counted it in flight
// (see Pool.submit) and acquired room if the queue is bounded.
func (q *injector) push(n *node, l int) {
	n.queuedAt = nanotime()
	q.mu.Lock()
	q.seq++
	n.group = q.seq
	if t := q.tails[l]; t != nil {
		t.next = n
	} else {
		q.heads[l] = n
	}
	q.tails[l] = n
	q.queued[l].Store(q.queued[l].Load() + 1) // under mu: no other writer
	q.submitted.Store(q.seq)                  // under mu: no other writer
	q.mu.Unlock()
}

// empty reports whether no task is queued, without the lock: a worker
// polling an empty queue costs three atomic loads.
func (q *injector) empty() bool {
	return q.queued[0].Load() == 0 && q.queued[1].Load() == 0 && q.queued[2].Load() == 0
}

// len returns the number of queued tasks.
func (q *injector) len() int {
	return int(q.queued[0].Load() + q.queued[1].Load() + q.queued[2].Load())
}

// take removes and returns the next task (see pick), and reports whether
// more tasks remain queued; it returns nil if none is queued.
func (q *injector) take() (n *node, more bool) {
	if q.empty() {
		return nil, false
	}
	now := nanotime()
	q.mu.Lock()
	l := q.pick()
	if l < 0 {
		q.mu.Unlock()
		return nil, false
	}
	n = q.heads[l]
	q.heads[l] = n.next
	if n.next == nil {
		q.tails[l] = nil
	}
	n.next = nil
	q.queued[l].Store(q.queued[l].Load() - 1) // under mu: no other writer
	// Queue wait, from push to take; now was read before the lock, so it
	// may precede a push that won the lock meanwhile.
	d := max(now-n.queuedAt, 0)
	q.waits.Store(q.waits.Load() + 1)         // under mu: no other writer
	q.waitTotal.Store(q.waitTotal.Load() + d) // under mu: no other writer
	if d > q.waitMax.Load() {
		q.waitMax.Store(d) // under mu: no other writer
	}
	more = q.heads[0] != nil || q.heads[1] != nil || q.heads[2] != nil
	q.mu.Unlock()
	return n, more
}

// pick chooses the level to take from, or -1 if all are empty, and updates
// the aging counts: the most urgent non-empty level h, unless h has not
// been passed over aging times and a less urgent non-empty level has (the
// most urgent such level then): of the levels that are due, the most
// urgent goes first. Every non-empty level less urgent than the one chosen
// counts one more pass; the chosen level and the empty ones restart at 0.
// Levels more urgent than the chosen one keep their count (they were not
// passed over for priority).
//
// Bound: a level reaching aging passes is chosen at the next take unless
// a more urgent level is due at the same take; with three levels, Normal
// can be due ahead of Background only once, so the head of a level is
// passed over at most aging+1 times. Called with mu held.
func (q *injector) pick() int {
	h := -1
	for l := range q.heads {
		if q.heads[l] != nil {
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
			if q.heads[l] != nil && q.passed[l] >= q.aging {
				chosen = l // the most urgent level that is due
				break
			}
		}
	}
	for l := range q.heads {
		switch {
		case q.heads[l] == nil || l == chosen:
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
