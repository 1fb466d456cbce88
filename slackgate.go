package magpie

import "github.com/magpie-go/magpie/forkjoin"

// The slack gate, re-checked between batches. Inside a task whose *Worker
// has slack queued (slackQueued: Surplus() >= 1) a short loop runs inline,
// with no probe (smallInline, split.go): the other workers have the queued
// tasks to take. That holds when the loop starts, not necessarily later:
// the others may steal the queued tasks, finish them and go idle while a
// long short loop is still running inline. So an inline loop of more than
// slackBatch indices runs in batches (slackBatch, then four times as many
// done in all each time), and after each one re-reads the gate; once the
// slack is gone, the rest goes to runRange, whose task probe shares it if
// it lasts (probetask.go). A loop of at most slackBatch indices is the
// plain loop it was, with no check: the nested fine-grained loops the gate
// exists for pay nothing.
//
// Invariant: every index runs exactly once: the batches run [0, k) on the
// caller, the rest [k, n) is handed over whole and only after the last
// batch has returned.
//
// A helper that reduces (Reduce, ReduceWith, Count, MinFunc, MaxFunc)
// folds the batches into one accumulator, then combines it with the
// rest's result, the inline part first (reduceWhileSlack): the same
// ordered combine as two adjacent pieces of the engine, so the result is
// the one the helper documents for any cut. Filter and FilterMap put the
// inline part's kept elements before the rest's segments; IndexFunc, Any,
// All and ContainsFunc return a match found inline (the first, since the
// inline part holds the lowest indices) and search only the rest
// otherwise (indexWhileSlack). ForErr, ForContext, MapErr and MapContext
// return an error (or a done context) met inline, the first in index
// order, and otherwise run the rest with the index shifted by k
// (forErrInline). Map2, ForInit, MapInit, ForW and ForRangeW run the rest
// on the slices from k or with the indices shifted by k, ForInit and
// MapInit with states of its own.
//
// Scope: For, ForRange, Map, MapInPlace and the helpers above
// (TestShortLoopSlackGoneGoesParallel, one subtest each;
// TestSlackGoneSequentialResult; TestSlackGonePanicIsPanicError). Not
// gated: Sum, Min and Max (no user function: a short slice's cost is
// bounded by its length, a few operators per element), ForChunks and
// Do (a Grain of at least 1: they never take this path), Scan
// (shortByCount).

// slackBatch is the first batch of a slack-gated loop and the largest loop
// that runs with no re-check.
const slackBatch = 16

// inlineWhileSlack is the inline path of a helper that smallInline sent
// inline: run(0, n), unless r is a worker with slack queued on a pool of
// several workers, no Grain, and n > slackBatch: then it runs batches
// while the slack lasts. It returns the first index not run: n, or where
// the slack was gone, for the caller to hand [k, n) to runRange. A panic
// in run reaches the caller as a *forkjoin.PanicError, as every inline path's does.
func inlineWhileSlack(r forkjoin.Runner, n, grain int, run func(lo, hi int)) int {
	defer rethrow()
	w, ok := r.(*forkjoin.Worker)
	if !ok || grain > 0 || n <= slackBatch || w.Pool().Parallelism() <= 1 {
		run(0, n)
		return n
	}
	k, end := 0, slackBatch
	for {
		run(k, end)
		k = end
		if k == n || !slackQueued(w) {
			return k
		}
		end = min(n, k*slackGrowth)
	}
}

// reduceWhileSlack is inlineWhileSlack for a helper whose pieces reduce:
// leaf folds [lo, hi) into acc, starting from acc; if the slack goes at k
// before n, rest(k) returns the result of [k, n) through the engine (the
// task probe, runRange), and the result is combine(inline part, rest), in
// index order. A loop of at most slackBatch indices is leaf(acc, 0, n).
func reduceWhileSlack[A any](r forkjoin.Runner, n, grain int, acc A, leaf func(acc A, lo, hi int) A,
	rest func(k int) A, combine func(a, b A) A) A {
	k := inlineWhileSlack(r, n, grain, func(lo, hi int) { acc = leaf(acc, lo, hi) })
	if k == n {
		return acc
	}
	return combineCaught(combine, acc, rest(k))
}

// combineCaught is combine(a, b) on the caller's goroutine, with a panic
// turned into a *forkjoin.PanicError, as a combine run in a task reaches
// the caller.
func combineCaught[A any](combine func(a, b A) A, a, b A) A {
	defer rethrow()
	return combine(a, b)
}

// slackGrowth is the factor by which a slack-gated loop's done part grows
// at each batch: about log4(n/slackBatch) re-checks in all.
const slackGrowth = 4
