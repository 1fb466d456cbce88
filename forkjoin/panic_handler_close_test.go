package forkjoin

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestPanicHandlerCanClose: a panic handler that shuts its pool down (a
// service that stops on its first unexpected panic) returns, and the pool
// then closes. The handler runs on a goroutine of its own while the worker
// that reports the panic waits for it; on 1c45f08 Close from the handler
// waited for the workers to exit, one of which waited for the handler, so
// both hung (the hang limit failed the test; it passed on 4338888, where
// the handler ran on the worker's goroutine and Close saw a worker).
func TestPanicHandlerCanClose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(p *Pool)
	}{
		{"Close", func(p *Pool) { p.Close() }},
		{"Shutdown", func(p *Pool) { _ = p.Shutdown(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *Pool
			handled := make(chan struct{})
			p = New(WithParallelism(1), WithPanicHandler(func(*PanicError) {
				tc.close(p)
				close(handled)
			}))
			testenv.Within(t, "a handler that closes its pool", func() {
				require.NoError(t, p.Execute(func(*Worker) { panic("boom") }))
				<-handled
				p.Close()
			})
			require.ErrorIs(t, p.Execute(func(*Worker) {}), ErrClosed)
			require.Equal(t, 0, p.Stats().Workers)
		})
	}
}
