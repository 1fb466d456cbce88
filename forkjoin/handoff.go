package forkjoin

import (
	"sync"
	"sync/atomic"
)

// A worker waiting in a join runs only tasks of its own computation (see
// Worker.waitUntil): a task of another computation that calls
// runtime.Goexit would otherwise unwind the waiting worker's goroutine
// through the frames of the computation it waits for, and fail that one.
// A computation is everything one submission (Execute, Submit, Invoke from
// outside) forks, directly or not; its tasks carry the same group number
// (node.group), given out by the pool at submission.
//
// Thieves cannot look at a task before taking it (its node may be a cell
// that its owner is recycling, see cellList), so a waiting worker may take
// a task of another computation. It hands it off here instead of running
// it: idle workers take any handed-off task (before new submissions: the
// computation it belongs to is already running), and a waiting worker takes
// one of its own computation, so that a task handed off by a waiter of
// another computation is never out of reach of a waiter that needs it.
//
// Invariant: every task in the list has been taken from a deque and is run
// exactly once, by whoever removes it from the list. n counts the list, so
// that looking at an empty one costs one atomic load.
type handoff struct {
	mu    sync.Mutex
	tasks []*node // guarded by mu
	n     atomic.Int32
}

// put adds x to the list.
func (h *handoff) put(x *node) {
	h.mu.Lock()
	h.tasks = append(h.tasks, x)
	h.n.Add(1)
	h.mu.Unlock()
}

// take removes and returns the oldest task of group g, or of any group if
// g is 0, or nil if there is none.
func (h *handoff) take(g uint64) *node {
	if h.n.Load() == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.tasks {
		if g == 0 || x.group == g {
			h.tasks = append(h.tasks[:i], h.tasks[i+1:]...)
			h.n.Add(-1)
			return x
		}
	}
	return nil
}

// len reports the number of handed-off tasks.
func (h *handoff) len() int { return int(h.n.Load()) }

// globalGroupBit marks the computation numbers that no pool gives out
// (groupOf would need 2^63 submissions to set it): those of Broadcasts
// from outside, and those of a scope's tasks spawned on a pool other than
// the scope's (scope.go, "Whose computation"). A pool's own numbers are
// unique only within the pool; these are unique in the process, so that
// on any pool such a number names one computation and no other.
const globalGroupBit = 1 << 63

// globalGroups counts the numbers newGlobalGroup has given out.
var globalGroups atomic.Uint64

// newGlobalGroup returns a computation number that no other computation
// of any pool has.
func newGlobalGroup() uint64 { return globalGroupBit | globalGroups.Add(1) }
