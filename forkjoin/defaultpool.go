package forkjoin

import (
	"errors"
	"sync"
	"sync/atomic"
)

// ErrDefaultStarted is returned by SetDefault once the Default pool has
// been created: its settings can no longer change.
var ErrDefaultStarted = errors.New("forkjoin: SetDefault called after the Default pool was created")

var (
	// defaultPool is the Default pool once created. Default's fast path is
	// this one atomic load (as cheap as the sync.Once it replaces); it is
	// stored under defaultMu, after the pool is fully built, so a reader
	// that sees it sees the whole pool.
	defaultPool atomic.Pointer[Pool]
	// defaultMu serializes the creation of the Default pool with
	// SetDefault: whichever takes it first decides whether the options
	// set count.
	defaultMu   sync.Mutex
	defaultOpts []Option // guarded by defaultMu; SetDefault's options, read once at creation
)

// Default returns the shared pool, created on first use with
// runtime.GOMAXPROCS(0) workers, or with the options of SetDefault if it
// was called before. Close and Shutdown on it do nothing: it lives as long
// as the process, like Java's common pool.
func Default() *Pool {
	if p := defaultPool.Load(); p != nil {
		return p
	}
	return createDefault()
}

// createDefault is Default's slow path: the first caller creates the pool
// under defaultMu; the others wait for it there.
func createDefault() *Pool {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if p := defaultPool.Load(); p != nil {
		return p // another caller created it while this one waited
	}
	opts := append(defaultOpts[:len(defaultOpts):len(defaultOpts)], shared())
	p := New(opts...)
	defaultPool.Store(p)
	return p
}

// shared marks the pool New builds as the Default pool.
func shared() Option { return func(c *config) { c.shared = true } }

// SetDefault sets the options of the Default pool (those of New, such as
// WithParallelism, WithPanicHandler or WithWorkerHooks), which is created
// with them at its first use: call it early, from main, before anything
// calls Default() or passes a nil Runner or *Pool to a function of magpie.
// Each call before that replaces the options of earlier calls; once the
// Default pool exists, SetDefault changes nothing and returns
// ErrDefaultStarted. The options are applied to a scratch configuration
// at once, so an invalid one panics here rather than at the first use.
//
// SetDefault and Default may be called concurrently from any goroutines:
// the first Default() creates the pool with the options of the last
// SetDefault that returned nil before it, and every later SetDefault
// returns ErrDefaultStarted (TestSetDefaultRacesDefault, under -race;
// TestSetDefaultBeforeFirstUse, TestSetDefaultBadOptions).
func SetDefault(opts ...Option) error {
	var scratch config
	for _, o := range opts {
		if o == nil {
			panic("forkjoin: SetDefault called with a nil Option")
		}
		o(&scratch)
	}
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultPool.Load() != nil {
		return ErrDefaultStarted
	}
	defaultOpts = append([]Option(nil), opts...) // the caller's slice may change after we return
	return nil
}
