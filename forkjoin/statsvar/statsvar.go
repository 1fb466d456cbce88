// Package statsvar exports a forkjoin pool's Stats through expvar, so that
// they appear at /debug/vars beside the runtime's memstats.
//
// It is a package of its own because importing expvar registers an HTTP
// handler and links net/http: programs that do not want the variables do not
// pay for them.
//
//	pool := forkjoin.New()
//	statsvar.Publish("magpie", pool)
//	// GET /debug/vars now includes "magpie": {"Workers": 8, "Steals": ..., ...}
package statsvar

import (
	"expvar"

	"github.com/magpie-go/magpie/forkjoin"
)

// Var returns an expvar.Var whose value is p.Stats() at the time it is read.
func Var(p *forkjoin.Pool) expvar.Var {
	return expvar.Func(func() any { return p.Stats() })
}

// Publish publishes p's Stats under name. Like expvar.Publish it panics if
// name is already in use.
func Publish(name string, p *forkjoin.Pool) {
	expvar.Publish(name, Var(p))
}
