//go:build (amd64 || 386) && !race

package forkjoin

import (
	"sync/atomic"
	"unsafe"
)

// storeRelease stores v with release semantics: a reader that loads v also
// sees every store made before it. It serves the owner's writes on the
// fork/join path (settling a Future, completing a cell it ran itself,
// resetting a recycled cell), which only need that order. On x86 (total
// store order) a plain MOV is a release store; atomic.Store would be an
// XCHG, a full fence costing more than the whole rest of a fork and join on
// the machines we measured (docs/design.md). Under the race detector, and
// on weakly ordered architectures, settle_atomic.go is used instead.
func storeRelease(p *atomic.Uint32, v uint32) { *(*uint32)(unsafe.Pointer(p)) = v }
