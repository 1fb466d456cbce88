package magpie

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

func TestDo(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(3))
	defer p.Close()
	single := forkjoin.New(forkjoin.WithParallelism(1))
	defer single.Close()
	for _, k := range runnerKinds(p, single) {
		for n := 0; n <= 40; n++ {
			hits := make([]int32, n)
			fns := make([]func(), n)
			for i := range fns {
				fns[i] = func() { atomic.AddInt32(&hits[i], 1) }
			}
			k.call(func(r forkjoin.Runner) { Do(r, fns...) })
			for i, h := range hits {
				require.Equal(t, int32(1), h, "%s n=%d fn %d", k.name, n, i)
			}
		}
	}
}

// TestDoRunsInParallel shows that Do gives each function a task of its
// own: two functions that wait for each other complete on a two-worker
// pool. The wait is bounded so that a sequential Do fails instead of
// hanging.
func TestDoRunsInParallel(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var a, b atomic.Bool
	wait := func(flag *atomic.Bool) bool {
		deadline := time.Now().Add(30 * time.Second)
		for !flag.Load() {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	}
	var okA, okB bool
	Do(p,
		func() { a.Store(true); okA = wait(&b) },
		func() { b.Store(true); okB = wait(&a) })
	require.True(t, okA && okB, "the two functions did not run at the same time")
}

func TestDoPanics(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	var ran atomic.Int32
	var got any
	func() {
		defer func() { got = recover() }()
		Do(p, func() { ran.Add(1) }, func() { panic("second") }, func() { ran.Add(1) })
	}()
	pe, ok := got.(*forkjoin.PanicError)
	require.True(t, ok, "recovered %T", got)
	require.Equal(t, "second", pe.Value)
	require.PanicsWithValue(t, "magpie: Do called with a nil function at index 1", func() { Do(p, func() {}, nil) })
	Do(p, func() { ran.Add(1) }) // the pool survives
	require.GreaterOrEqual(t, ran.Load(), int32(2))
}

// goroutineID returns the calling goroutine's id, read from its stack
// header ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// TestDoSingleRunsOnCaller: Do with one function runs it on the caller's
// goroutine, from outside the pool (nothing is submitted) and from a task
// with its *Worker, and its panic still arrives as a *forkjoin.PanicError.
func TestDoSingleRunsOnCaller(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	caller := goroutineID()
	before := p.Stats().Submitted
	var ran string
	Do(p, func() { ran = goroutineID() })
	require.Equal(t, caller, ran, "from outside")
	require.Equal(t, before, p.Stats().Submitted, "nothing submitted")
	forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
		task := goroutineID()
		Do(w, func() { ran = goroutineID() })
		require.Equal(t, task, ran, "from a task")
		return struct{}{}
	})
	var got any
	func() {
		defer func() { got = recover() }()
		Do(p, func() { panic("single") })
	}()
	pe, ok := got.(*forkjoin.PanicError)
	require.True(t, ok, "recovered %T", got)
	require.Equal(t, "single", pe.Value)
}
