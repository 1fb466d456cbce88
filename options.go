package magpie

// Option configures one call of a helper.
type Option func(*options)

type options struct {
	grain int // > 0: fixed cutoff; 0: adaptive
}

// Grain sets a fixed cutoff: the helper splits work down to pieces of at
// most n elements (or indices) and runs each piece sequentially. Without it
// the helpers split adaptively, which needs no tuning. n < 1 is taken as 1.
func Grain(n int) Option {
	return func(o *options) { o.grain = max(n, 1) }
}

func collectOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}
