package forkjoin

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// growStack calls itself depth times with a frame big enough to make the
// runtime copy the goroutine's stack to a bigger one, then calls f.
func growStack(depth int, f func()) {
	var pad [256]byte
	if depth == 0 {
		f()
		return
	}
	growStack(depth-1, f)
	runtime.KeepAlive(&pad)
}

// TestGoroutineKeyIdentifiesLiveGoroutines: among goroutines alive at the
// same time, goroutineKey is distinct, stays the same across a stack copy
// and a reschedule, and names the same goroutines as the id runtime.Stack
// prints (stackGoid), one to one.
func TestGoroutineKeyIdentifiesLiveGoroutines(t *testing.T) {
	const n = 64
	type ids struct {
		key, keyLater   uint64
		goid, goidLater uint64
	}
	got := make([]ids, n)
	var started, wg sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i].key, got[i].goid = goroutineKey(), stackGoid()
			started.Done()
			<-release // every goroutine alive at once
			runtime.Gosched()
			growStack(200, func() { got[i].keyLater, got[i].goidLater = goroutineKey(), stackGoid() })
		}()
	}
	started.Wait()
	close(release)
	wg.Wait()
	byKey := map[uint64]uint64{}
	byGoid := map[uint64]uint64{}
	for i, g := range got {
		assert.Equal(t, g.key, g.keyLater, "goroutine %d: key changed", i)
		assert.Equal(t, g.goid, g.goidLater, "goroutine %d: id changed", i)
		require.NotZero(t, g.key)
		require.NotZero(t, g.goid)
		_, dup := byKey[g.key]
		require.False(t, dup, "goroutine %d shares its key with another live goroutine", i)
		byKey[g.key], byGoid[g.goid] = g.goid, g.key
	}
	assert.Len(t, byGoid, n, "two goroutines with one id")
}

// TestGoroutineKeyHoldsEveryGoroutineID: the key is as wide as a goroutine
// id (64 bits) on every port. On the ports that key by the id
// (goroutine_other.go: 386, arm, ...) a uintptr key cut it to 32 bits, so
// after 2^32 goroutines a fresh goroutine would be taken for a worker
// still alive with the same low bits (a long-lived Default pool in a
// server meets this within days). Run by .ci/run with GOARCH=386.
func TestGoroutineKeyHoldsEveryGoroutineID(t *testing.T) {
	assert.Equal(t, 8, int(unsafe.Sizeof(goroutineKey())))
}

// keepATaskRunning keeps a task running on a pool of its own until the test
// and its deferred calls are over, so that callingWorker does the lookup
// rather than answering from its gate (no task running anywhere).
func keepATaskRunning(t *testing.T) {
	busy := New(WithParallelism(1))
	inTask, done := make(chan struct{}), make(chan struct{})
	require.NoError(t, busy.Execute(func(*Worker) { close(inTask); <-done }))
	<-inTask
	t.Cleanup(func() {
		close(done)
		busy.Close()
	})
}

// TestCallingWorkerForgetsExitedWorkers: a goroutine started after a pool's
// workers exited may reuse one's runtime structure, and so its key; it must
// not be taken for that worker. Another pool keeps a task running, so that
// callingWorker does the lookup rather than answering from its gate.
func TestCallingWorkerForgetsExitedWorkers(t *testing.T) {
	keepATaskRunning(t)

	for range 20 {
		p := New(WithParallelism(4))
		Invoke(p, func(w *Worker) int {
			require.Same(t, w, callingWorker())
			return 0
		})
		p.Close()
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.Nil(t, callingWorker(), "a fresh goroutine is taken for a worker")
			}()
		}
		wg.Wait()
	}
}

func BenchmarkGoroutineKey(b *testing.B) {
	b.Run("impl=key", func(b *testing.B) {
		for b.Loop() {
			_ = goroutineKey()
		}
	})
	b.Run("impl=stackGoid", func(b *testing.B) {
		for b.Loop() {
			_ = stackGoid()
		}
	})
}

// TestOnWorker: false on a goroutine of no pool, true inside a task.
func TestOnWorker(t *testing.T) {
	p := New(WithParallelism(2))
	defer p.Close()
	require.False(t, OnWorker())
	require.True(t, Invoke(p, func(*Worker) bool { return OnWorker() }))
	require.False(t, OnWorker())
}
