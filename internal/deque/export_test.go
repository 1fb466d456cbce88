package deque

// State is a snapshot of a deque's internals, for tests.
type State struct {
	Top, Bottom int64 // the public part is [Top, Bottom)
	Private     int   // number of private elements
	PrivateCap  int   // capacity of the private buffer
	WantSplit   bool  // a thief asked for work
}

// StateOf returns d's state. It reads owner-only fields: call it on the
// owner's goroutine, or after the owner has stopped (with a happens-before
// edge to its last operation).
func StateOf[T any](d *Deque[T]) State {
	return State{
		Top:        d.c.top.Load(),
		Bottom:     d.c.bottom.Load(),
		Private:    d.c.n,
		PrivateCap: len(d.c.priv),
		WantSplit:  d.c.wantSplit.Load() != 0,
	}
}
