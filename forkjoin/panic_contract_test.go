package forkjoin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestPanicContractInlineAndSubmitted walks the rows of the panic table in
// the package documentation for the calls of this package, each from
// outside the pool and from inside one of its tasks (where Invoke and Run
// run the function inline): every one delivers a *PanicError with the
// original value. (Before the fix, Invoke and Run from inside let the raw
// value through.)
func TestPanicContractInlineAndSubmitted(t *testing.T) {
	p := forkjoin.New(forkjoin.WithParallelism(2))
	defer closePool(t, p)
	want := boom{"contract"}
	fail := func(*forkjoin.Worker) int { panic(want) }
	rows := map[string]func(w *forkjoin.Worker){ // w is nil from outside
		"Invoke": func(w *forkjoin.Worker) { forkjoin.Invoke(p, fail) },
		"Run(pool)": func(w *forkjoin.Worker) {
			forkjoin.Run(p, fail)
		},
		"Run(worker)": func(w *forkjoin.Worker) {
			if w == nil {
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int { return forkjoin.Run(w, fail) })
				return
			}
			forkjoin.Run(w, fail)
		},
		"Join": func(w *forkjoin.Worker) {
			body := func(w *forkjoin.Worker) int {
				a, _ := forkjoin.Join(w, fail, func(*forkjoin.Worker) int { return 0 })
				return a
			}
			if w == nil {
				forkjoin.Invoke(p, body)
				return
			}
			body(w)
		},
		"Future.Join": func(w *forkjoin.Worker) {
			body := func(w *forkjoin.Worker) int { return forkjoin.Fork(w, fail).Join(w) }
			if w == nil {
				forkjoin.Invoke(p, body)
				return
			}
			body(w)
		},
	}
	for name, call := range rows {
		t.Run(name, func(t *testing.T) {
			check := func(v any) {
				pe, ok := v.(*forkjoin.PanicError)
				require.True(t, ok, "%s: got %T %v, want a *forkjoin.PanicError", name, v, v)
				require.Equal(t, want, pe.Value)
			}
			within(t, name, func() {
				check(recoverPanic(func() { call(nil) })) // from outside
				var inside any
				forkjoin.Invoke(p, func(w *forkjoin.Worker) int {
					inside = recoverPanic(func() { call(w) })
					return 0
				})
				check(inside)
			})
		})
	}
	t.Run("Get", func(t *testing.T) {
		_, err := forkjoin.Submit(p, fail).Get(context.Background())
		var pe *forkjoin.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, want, pe.Value)
	})
}
