package forkjoin_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestSpawnAfterAskPublishes: a spawn made while a thief's request is
// pending goes to a new deque element, which publishes, never into the
// private block on top of the deque (Deque.PeekPrivate returns nil once a
// thief asked; spawn.go, "No hidden work"). On 2 workers the body spawns
// A (published: the deque starts empty), then B (private, in its own
// block), waits until the other worker has taken A and a request is
// pending (the thief asks for more as it takes the last public element),
// then spawns C and holds, neither helping nor joining, until C has
// started: only the other worker can start it. With PeekPrivate ignoring
// the request, C joined B's private block and the hold gave up after
// hangTimeout (the mutation run on this commit's parent).
//
// The wait for the request (Asked) is the precondition made explicit: when
// the thief took A before B was spawned, B's spawn published B and served
// that request, and C, spawned before the thief asked again (as it took
// B), went private while this task held without a push or pop that could
// serve the next request: the test hung about once in 15 runs under -race
// (review rev13), with the runtime doing what it promises.
func TestSpawnAfterAskPublishes(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	waitAsleep(t, p, 2)
	var aStarted, cStarted, failed atomic.Bool
	within(t, "a spawn after a request", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
				s.Spawn(w, func(*forkjoin.Worker) { aStarted.Store(true) })
				s.Spawn(w, func(*forkjoin.Worker) {})
				if !holdUntil(aStarted.Load) || !holdUntil(func() bool { return forkjoin.Asked(w) }) {
					failed.Store(true)
					return
				}
				s.Spawn(w, func(*forkjoin.Worker) { cStarted.Store(true) })
				failed.Store(!holdUntil(cStarted.Load))
			})
			return 0
		})
	})
	require.False(t, failed.Load(), "a task spawned after the other worker asked for work stayed hidden")
}
