package forkjoin

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// HookPairs records WithWorkerHooks calls per worker index: the number of
// goroutines between their start and exit hooks, which must be 0 or 1 (one
// goroutine per slot, the hooks of an index alternating). Pass Start and
// Exit to WithWorkerHooks, and call Check once the pool is closed. Exported
// for the external tests of the compensating workers' lifecycle
// (spare_reclaim_test.go, review25_test.go), shared with the internal ones.
type HookPairs struct {
	mu     sync.Mutex
	active map[int]int
	starts map[int]int
	exits  map[int]int
	errs   []string
}

// NewHookPairs returns an empty recorder.
func NewHookPairs() *HookPairs {
	return &HookPairs{active: map[int]int{}, starts: map[int]int{}, exits: map[int]int{}}
}

// Start is the start hook.
func (h *HookPairs) Start(i int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active[i]++
	h.starts[i]++
	if h.active[i] != 1 {
		h.errs = append(h.errs, fmt.Sprintf("start %d: %d goroutines in the slot", i, h.active[i]))
	}
}

// Exit is the exit hook.
func (h *HookPairs) Exit(i int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active[i]--
	h.exits[i]++
	if h.active[i] != 0 {
		h.errs = append(h.errs, fmt.Sprintf("exit %d: %d goroutines left in the slot", i, h.active[i]))
	}
}

// Starts returns how many times index i's start hook ran.
func (h *HookPairs) Starts(i int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts[i]
}

// Check, after Close: no slot ever held two goroutines, and every start
// has its exit.
func (h *HookPairs) Check(t testing.TB) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(t, h.errs)
	require.Equal(t, h.starts, h.exits, "every start hook has its exit hook")
}
