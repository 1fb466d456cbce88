//go:build !((amd64 || 386) && !race)

package forkjoin

import "sync/atomic"

// storeRelease stores v with release semantics; see settle_tso.go.
func storeRelease(p *atomic.Uint32, v uint32) { p.Store(v) }
