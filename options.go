package magpie

// Option configures one call of a helper.
type Option func(*options)

type options struct {
	grain   int  // > 0: fixed cutoff; 0: adaptive
	inPlace bool // Sort: the in-place quicksort for every type (InPlace)
}

// Grain sets a fixed cutoff: the helper splits work down to pieces of at
// most n elements (or indices) and runs each piece sequentially. Without it
// the helpers split adaptively, which needs no tuning. n < 1 is taken as 1
// (TestGrainBelowOneIsOne).
func Grain(n int) Option {
	return func(o *options) { o.grain = max(n, 1) }
}

func collectOptions(opts []Option) options {
	if len(opts) == 0 {
		// Without this early return o would escape to the heap (its
		// address goes to an unknown function) on every call, options or
		// not: the helpers' small-input path must not allocate.
		return options{}
	}
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}
