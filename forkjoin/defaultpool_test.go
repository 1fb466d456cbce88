package forkjoin

import (
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// withFreshDefault runs fn as if the process had not created the Default
// pool yet: it sets the Default pool aside (TestMain creates it first),
// runs fn, closes the pool fn's calls created, if any (Close itself does
// nothing on a Default pool), and puts the original back. No test of the
// package runs in parallel with another, so no other test sees the swap.
func withFreshDefault(t *testing.T, fn func()) {
	t.Helper()
	defaultMu.Lock()
	saved, savedOpts := defaultPool.Load(), defaultOpts
	defaultPool.Store(nil)
	defaultOpts = nil
	defaultMu.Unlock()
	defer func() {
		defaultMu.Lock()
		made := defaultPool.Load()
		defaultPool.Store(saved)
		defaultOpts = savedOpts
		defaultMu.Unlock()
		if made != nil {
			testenv.Within(t, "closing the fresh Default pool", func() {
				made.beginClose()
				<-made.stopped
				made.waitWatchdog()
			})
		}
	}()
	fn()
}

// TestSetDefaultBeforeFirstUse: the options of the last SetDefault before
// the first Default() are the Default pool's; Close on it still does
// nothing; every later SetDefault returns ErrDefaultStarted and changes
// nothing.
func TestSetDefaultBeforeFirstUse(t *testing.T) {
	withFreshDefault(t, func() {
		require.NoError(t, SetDefault(WithParallelism(1)))
		require.NoError(t, SetDefault(WithParallelism(3), WithName("custom-default"))) // replaces the first
		p := Default()
		require.Same(t, p, Default())
		require.Equal(t, 3, p.Parallelism())
		require.Equal(t, "custom-default", p.name)
		p.Close() // a no-op on the Default pool
		require.Equal(t, 7, Invoke(nil, func(*Worker) int { return 7 }), "still open after Close")
		require.ErrorIs(t, SetDefault(WithParallelism(2)), ErrDefaultStarted)
		require.Equal(t, 3, Default().Parallelism())
	})
	require.ErrorIs(t, SetDefault(), ErrDefaultStarted, "TestMain created the process's Default pool")
}

// TestSetDefaultBadOptions: an invalid option panics in SetDefault, not
// at the first use, and leaves the earlier options in place.
func TestSetDefaultBadOptions(t *testing.T) {
	withFreshDefault(t, func() {
		require.NoError(t, SetDefault(WithParallelism(2)))
		require.PanicsWithValue(t, "forkjoin: WithMode called with Mode(7), not LIFO or FIFO",
			func() { _ = SetDefault(WithMode(Mode(7))) })
		require.PanicsWithValue(t, "forkjoin: SetDefault called with a nil Option",
			func() { _ = SetDefault(nil) })
		require.Equal(t, 2, Default().Parallelism())
	})
}

// TestSetDefaultRacesDefault: SetDefault and Default called at once from
// many goroutines (run it under -race). Every Default() returns the same
// pool; a SetDefault that returned nil came before the creation, so the
// pool has the parallelism of one of those; every other returned
// ErrDefaultStarted.
func TestSetDefaultRacesDefault(t *testing.T) {
	rounds := 50
	if testenv.Race {
		rounds = 20
	}
	for range rounds {
		withFreshDefault(t, func() {
			const setters, getters = 4, 4
			errs := make([]error, setters)
			got := make([]*Pool, getters)
			var start, wg sync.WaitGroup
			start.Add(1)
			for i := range setters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start.Wait()
					errs[i] = SetDefault(WithParallelism(i + 1))
				}()
			}
			for i := range getters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start.Wait()
					got[i] = Default()
				}()
			}
			start.Done()
			testenv.Within(t, "SetDefault and Default", wg.Wait)
			p := got[0]
			for _, q := range got {
				require.Same(t, p, q)
			}
			var allowed []int
			for i, err := range errs {
				if err == nil {
					allowed = append(allowed, i+1)
				} else {
					require.ErrorIs(t, err, ErrDefaultStarted)
				}
			}
			if len(allowed) == 0 {
				allowed = []int{min(runtime.GOMAXPROCS(0), MaxParallelism)}
			}
			require.True(t, slices.Contains(allowed, p.Parallelism()), "parallelism %d, allowed %v", p.Parallelism(), allowed)
			require.ErrorIs(t, SetDefault(WithParallelism(1)), ErrDefaultStarted)
		})
	}
}
