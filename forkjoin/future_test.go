package forkjoin_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestSubmitGetCancel checks that Get gives up with ctx.Err() when its
// context ends first, that the task keeps running regardless, and that a
// later Get returns the result.
func TestSubmitGetCancel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	release := make(chan struct{})
	f := forkjoin.Submit(p, func(*forkjoin.Worker) int { <-release; return 42 })
	require.False(t, f.Done())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := f.Get(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, v)

	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = f.Get(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, f.Done())

	close(release)
	within(t, "Get", func() { v, err = f.Get(context.Background()) })
	require.NoError(t, err)
	require.Equal(t, 42, v)
	require.True(t, f.Done())

	// A done future answers even with a cancelled context.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	v, err = f.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, 42, v)
}

// TestGetFromManyGoroutines waits for one future from many goroutines at
// once, some of them with contexts that expire first.
func TestGetFromManyGoroutines(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	release := make(chan struct{})
	f := forkjoin.Submit(p, func(w *forkjoin.Worker) int { <-release; return fibJoin(w, 12) })
	const n = 32
	results := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	var gaveUp sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		ctx := context.Background()
		if g%4 == 0 {
			gaveUp.Add(1)
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			go func() { time.Sleep(time.Millisecond); cancel() }()
		}
		go func() {
			defer wg.Done()
			results[g], errs[g] = f.Get(ctx)
			if g%4 == 0 {
				gaveUp.Done()
			}
		}()
	}
	within(t, "cancelled Gets", gaveUp.Wait)
	close(release)
	within(t, "Gets", wg.Wait)
	for g := 0; g < n; g++ {
		if g%4 == 0 {
			require.ErrorIs(t, errs[g], context.Canceled, "goroutine %d", g)
		} else {
			require.NoError(t, errs[g])
			require.Equal(t, fibSeq(12), results[g])
		}
	}
}

// TestFutureDone follows Done through a forked task's life.
func TestFutureDone(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(1))
	defer closePool(t, p)
	var before, after bool
	var f *forkjoin.Future[int]
	within(t, "Fork", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
			f = forkjoin.Fork(w, func(*forkjoin.Worker) int { return 5 })
			before = f.Done() // one worker, busy here: nobody ran it yet
			f.Join(w)
			after = f.Done()
			return 0
		})
	})
	require.False(t, before)
	require.True(t, after)
	// The future outlives its task: Get and Join after the fact.
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	require.Equal(t, 5, v)
	require.Equal(t, 5, forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return f.Join(w) }))
}

// TestFutureJoinedByOthers joins one forked future from both sides of a Join
// (possibly two workers), from another Invoke, and from outside with Get.
func TestFutureJoinedByOthers(t *testing.T) {
	pools(t, func(t *testing.T, p *forkjoin.Pool) {
		var f *forkjoin.Future[int]
		var a, b int
		within(t, "shared future", func() {
			forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
				f = forkjoin.Fork(w, func(w *forkjoin.Worker) int { return fibJoin(w, 16) })
				a, b = forkjoin.Join(w,
					func(w *forkjoin.Worker) int { return f.Join(w) },
					func(w *forkjoin.Worker) int { return f.Join(w) })
				return 0
			})
		})
		require.Equal(t, fibSeq(16), a)
		require.Equal(t, fibSeq(16), b)
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, fibSeq(16), v)
	})
}

// TestJoinSubmittedFromTask joins a Submitted future from inside another
// task of the same pool, which Submit's documentation allows ("wait for it
// with Get (or Join inside a task)").
func TestJoinSubmittedFromTask(t *testing.T) {
	// A worker joining g once helped with the Invoke'd root task, ran it on
	// top of a frame that g waited for, and deadlocked: joiners now never
	// run submitted tasks, except the one they join, which they claim.
	rounds := 2000
	if testenv.Race {
		rounds = 200
	}
	for round := 0; round < rounds; round++ {
		p := forkjoin.New(forkjoin.WithParallelism(1 + round%4))
		g := forkjoin.Submit(p, func(w *forkjoin.Worker) int { return fibJoin(w, 15) })
		var got int
		within(t, fmt.Sprintf("round %d: join submitted", round), func() {
			got = forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return g.Join(w) })
		})
		require.Equal(t, fibSeq(15), got)
		within(t, "Close", p.Close)
	}
}

func TestSubmitTaskPriority(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	f := forkjoin.SubmitTaskPriority[int](p, forkjoin.Normal, fibTask(18))
	var v int
	var err error
	within(t, "Get", func() { v, err = f.Get(context.Background()) })
	require.NoError(t, err)
	require.Equal(t, fibSeq(18), v)
}
