package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWithTakeBatchClamps: WithTakeBatch's doc says n runs from 1 to 32,
// clamped, and DefaultTakeBatch without the option; a compensating
// worker takes one at a time whatever the option (docs/design.md,
// "Batched takes").
func TestWithTakeBatchClamps(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want int
	}{
		{nil, DefaultTakeBatch},
		{[]Option{WithTakeBatch(-5)}, 1},
		{[]Option{WithTakeBatch(0)}, 1},
		{[]Option{WithTakeBatch(1)}, 1},
		{[]Option{WithTakeBatch(7)}, 7},
		{[]Option{WithTakeBatch(32)}, 32},
		{[]Option{WithTakeBatch(1000)}, 32},
	} {
		p := New(append(c.opts, WithParallelism(2), WithMaxBlocked(1))...)
		// Written by New before the workers start, read-only after.
		require.Equal(t, c.want, p.workers[0].takeBatch, "opts %v", c.opts)
		require.Equal(t, c.want, p.workers[1].takeBatch)
		require.Equal(t, 1, p.workers[2].takeBatch, "a compensating worker")
		p.Close()
	}
	require.Equal(t, 32, DefaultTakeBatch)
}
