package refuse

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestMain checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	forkjoin.Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// TestRunRefusedOnlyByThePool: Run reports refused only when the pool
// itself refuses the task (closed: Invoke's raw ErrClosed), having run
// nothing. A task's own panic holding ErrClosed is a panic of the task and
// reaches the caller as the *forkjoin.PanicError Invoke raises; on an open
// pool and on a *Worker Run returns the task's result.
func TestRunRefusedOnlyByThePool(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	res, refused := Run(p, func(*forkjoin.Worker) int { return 7 })
	require.Equal(t, 7, res)
	require.False(t, refused)

	v := func() (v any) {
		defer func() { v = recover() }()
		Run(p, func(*forkjoin.Worker) int { panic(forkjoin.ErrClosed) })
		return nil
	}()
	var pe *forkjoin.PanicError
	require.ErrorAs(t, v.(error), &pe, "a task's ErrClosed is a panic of the task")
	require.Equal(t, forkjoin.ErrClosed, pe.Value)

	type outcome struct {
		res     int
		refused bool
	}
	got := forkjoin.Invoke(p, func(w *forkjoin.Worker) outcome {
		r, refused := Run(w, func(*forkjoin.Worker) int { return 8 })
		return outcome{r, refused}
	})
	require.Equal(t, outcome{8, false}, got)

	p.Close()
	ran := false
	res, refused = Run(p, func(*forkjoin.Worker) int { ran = true; return 9 })
	require.True(t, refused)
	require.False(t, ran)
	require.Zero(t, res)
}
