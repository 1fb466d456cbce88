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
//
// An operator of a task server watches the submission counters among them:
// Completed, QueuedUrgent, QueuedNormal and QueuedBackground (the backlog
// by priority), and QueueWaits, QueueWaitTotal and QueueWaitMax (how long
// submitted tasks waited to start, in nanoseconds in the JSON, sampled: one
// submission in 8 of each priority is timed, so QueueWaits counts an
// eighth of the submissions; TestPublish), which Stats reads without
// taking a lock on the submission path.
package statsvar

import (
	"expvar"

	"github.com/magpie-go/magpie/forkjoin"
)

// Var returns an expvar.Var whose value is p.Stats() at the time it is
// read. A nil p means forkjoin.Default(), as everywhere in magpie.
func Var(p *forkjoin.Pool) expvar.Var {
	if p == nil {
		p = forkjoin.Default()
	}
	return expvar.Func(func() any { return p.Stats() })
}

// Publish publishes p's Stats under name (a nil p means
// forkjoin.Default()). Like expvar.Publish it panics if name is already in
// use.
func Publish(name string, p *forkjoin.Pool) {
	expvar.Publish(name, Var(p))
}
