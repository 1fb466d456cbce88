package forkjoin

import "context"

// Room in a bounded submission queue (WithMaxQueued).
//
// Invariant: every submission accepted and not yet given back (claimed,
// or rejected after acquiring room) holds either a token of q.room or one
// unit of q.owed: len(q.room) + q.owed counts them. A claim gives back an
// owed unit first, a token when none is owed.
//
// Only takes make room, and only workers take. A goroutine outside the
// pool waits for them (or fails with ErrQueueFull). One of the pool's own
// workers must not wait: when every worker is a task waiting for room,
// none is left to take, and the pool deadlocked (review rev15;
// TestMaxQueuedSubmissionTreeCompletes hung on 5c45ab2). Making room by
// running queued tasks on the waiting stack was tried and hangs too: each
// runs on top of the one before, and one that joins a task below it on
// some stack waits for ever. So, as forks are, a submission from one of
// the pool's workers is never bounded: on a full queue it is accepted
// past the bound and owes a token, paid back by the next claim before
// any token returns to the channel, so submitters from outside find the
// queue full until it holds fewer than its bound again
// (TestMaxQueuedOwnTasksAreNotBounded). The queue then holds at most the
// bound plus what the pool's own tasks submitted, as a deque holds what
// they forked.

// acquireRoom takes room in the bounded queue for one submission. When the
// queue is full, a submission from one of p's workers (a task, a hook)
// or a goroutine one of them waits for (see cannotWaitFor) owes a token;
// from elsewhere it fails with ErrQueueFull unless wait is
// set, and then it waits until ctx (nil: never) is done or the pool closes.
func (p *Pool) acquireRoom(ctx context.Context, wait bool) error {
	if p.inj.tryRoom() {
		return nil
	}
	if p.closed.Load() {
		return ErrClosed
	}
	// A goroutine that one of p's workers waits for without running
	// anything (a panic handler: runHandler) must not wait either: with
	// every other worker busy, that worker was the one to make room, and
	// it waited for the handler (TestMaxQueuedPanicHandlerSubmitDoesNotDeadlock).
	// cannotWaitFor tells both apart from the rest.
	if cannotWaitFor(p) {
		p.inj.owed.Add(1) // before the push: a claim may pay it back at once
		return nil
	}
	if !wait {
		return ErrQueueFull
	}
	return p.inj.awaitRoom(ctx)
}
