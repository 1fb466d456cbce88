// Package pipeline runs staged pipelines on forkjoin pools: a stream of
// items from an iter.Seq or a channel goes through stages, each a function
// run as tasks on a pool of its choice with a limit on how many of its
// items are in flight, connected by bounded queues, into a sink.
//
//	p := pipeline.From(records)
//	parsed := pipeline.Map(p, cpu, parse)                            // the default pool's width
//	stored := pipeline.Map(parsed, io, store, pipeline.WithLimit(4)) // a small pool of its own
//	err := pipeline.Run(ctx, stored, func(r Result) error { ... })
//
// Backpressure holds no worker: each stage is driven by one goroutine that
// submits an item's task only while the stage holds fewer than its limit
// of items, and that goroutine, not a worker, is what waits when the queue
// to the next stage is full. A stalled sink therefore stops the whole
// pipeline with at most 2 + Σ(limit + buffer) items pulled from the source
// and not yet consumed (TestBackpressureBoundsItemsInFlight).
//
// Items leave a stage in the order they entered it unless the stage is
// built WithUnordered (TestOrderKept). The first error (from a stage, a
// panic as a *forkjoin.PanicError, the sink's, ErrClosed from a closed
// pool) stops the pipeline and is Run's result
// (TestErrorsAndPanicsStopAtEveryPosition, TestClosedPoolFailsTheRun);
// cancelling ctx stops it and Run returns ctx.Err() (TestCancelMidStream).
// Run returns only once every goroutine and task it started has finished
// (TestRunWaitsForStagesIgnoringCtx; goleak in the package's TestMain).
package pipeline
