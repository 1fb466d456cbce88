package magpie

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/internal/testenv"
)

// TestScanJoinParticipantsAfterPanic: a participant of the blocked scan
// (scanblock.go) that has forked two others joins both even when the
// newer one panicked, before the panic goes on to Scan's caller. The
// older participant here is running (taken by another worker) and lasts
// until the joins have returned, or 300 ms; the newer panics. On 669f692
// the joins stopped at the first panic (newest first): the older
// participant was never joined and was still running after the panic had
// left the joins, so a Scan could return with a participant writing its
// slice.
func TestScanJoinParticipantsAfterPanic(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer p.Close()
	boom := errors.New("boom")
	var started, returned, outlived atomic.Bool
	var got any
	testenv.Within(t, "joins after a panic", func() {
		forkjoin.Invoke(p, func(w *forkjoin.Worker) struct{} {
			older := forkjoin.Fork(w, func(*forkjoin.Worker) struct{} {
				started.Store(true)
				deadline := time.Now().Add(300 * time.Millisecond)
				for !returned.Load() && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				outlived.Store(returned.Load())
				return struct{}{}
			})
			for deadline := time.Now().Add(testenv.HangTimeout); !started.Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond) // the other worker takes it: a fork published to an idle pool
			}
			newer := forkjoin.Fork(w, func(*forkjoin.Worker) struct{} { panic(boom) })
			forked := []*forkjoin.Future[struct{}]{older, newer}
			func() {
				defer func() { got = recover() }()
				if pe := joinParticipants(w, forked); pe != nil {
					panic(pe)
				}
			}()
			returned.Store(true)
			older.Join(w) // a second join returns at once; on the old code, the first
			return struct{}{}
		})
	})
	pe, ok := got.(*forkjoin.PanicError)
	require.True(t, started.Load(), "the older participant never started on the other worker")
	require.True(t, ok, "recovered %T %v", got, got)
	require.ErrorIs(t, pe, boom)
	require.False(t, outlived.Load(), "a participant was still running after the joins returned with the panic")
}
