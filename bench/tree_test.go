package bench

import (
	"testing"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
	"github.com/magpie-go/magpie/task"
)

// An unbalanced tree, UTS-style (the Unbalanced Tree Search benchmark): a
// random tree that is generated while it is walked, every node's shape
// derived from its parent's state by a hash, so the tree is the same on
// every run yet nobody knows a subtree's size before walking it. Here the
// root has utsRootKids children and every other node has utsKids children
// with probability utsQ, else none: a binomial tree close to critical
// (utsKids*utsQ = 0.998), whose subtrees differ in size by orders of
// magnitude. With utsSeed the tree has utsNodes nodes, is 363 levels deep,
// and one root child's subtree holds 81.5% of them: split the root's
// children into static chunks and one chunk gets most of the work. Every
// node costs utsNodeSteps steps of aluSpin (about 0.5 µs).

const (
	utsSeed      = 2
	utsRootKids  = 256
	utsKids      = 4
	utsQ         = 0.2495
	utsNodeSteps = 256
	utsNodes     = 46153 // nodes of the tree utsSeed gives (TestBenchImplementations checks it)
	utsGoDepth   = 6     // goroutine baselines: one goroutine per child above this depth
)

// utsNode is a node of the tree: its hash state and depth.
type utsNode struct {
	state uint64
	depth int
}

// splitmix64 is the hash the tree is generated with.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// utsRoot is the root of the benchmark's tree.
var utsRoot = utsNode{state: 0, depth: 0}

// kids is the number of children of n.
func (n utsNode) kids() int {
	if n.depth == 0 {
		return utsRootKids
	}
	if float64(splitmix64(n.state^0x1234)>>11)/(1<<53) < utsQ {
		return utsKids
	}
	return 0
}

// child is n's child i.
func (n utsNode) child(i int) utsNode {
	if n.depth == 0 {
		return utsNode{splitmix64(utsSeed*1000 + uint64(i)), 1}
	}
	return utsNode{splitmix64(n.state + uint64(i) + 1), n.depth + 1}
}

// utsResult is what a walk returns: the nodes visited and the xor of
// their work, which every implementation must agree on.
type utsResult struct {
	nodes int
	sum   uint64
}

func (a utsResult) add(b utsResult) utsResult { return utsResult{a.nodes + b.nodes, a.sum ^ b.sum} }

// visit does n's own work.
func (n utsNode) visit() utsResult { return utsResult{1, aluSpin(utsNodeSteps, n.state)} }

// utsSeq walks the subtree of n depth first.
func utsSeq(n utsNode) utsResult {
	r := n.visit()
	for i := range n.kids() {
		r = r.add(utsSeq(n.child(i)))
	}
	return r
}

// utsTask walks the subtrees of n's children lo..hi-1: it halves the range
// with InvokeBoth until one child is left, visits it and walks on into its
// children, so every child of every node is a fork other workers can
// steal, and an un-stolen fork allocates nothing.
type utsTask struct {
	n      utsNode
	lo, hi int
}

func (t utsTask) Compute(w *forkjoin.Worker) utsResult {
	if t.hi-t.lo > 1 {
		mid := (t.lo + t.hi) / 2
		a, b := task.InvokeBoth[utsResult, utsResult](w, utsTask{t.n, t.lo, mid}, utsTask{t.n, mid, t.hi})
		return a.add(b)
	}
	if t.hi == t.lo {
		return utsResult{}
	}
	c := t.n.child(t.lo)
	return c.visit().add(utsTask{c, 0, c.kids()}.Compute(w))
}

// utsMagpie walks the whole tree as utsTasks.
func utsMagpie(w *forkjoin.Worker) utsResult {
	return utsRoot.visit().add(utsTask{utsRoot, 0, utsRoot.kids()}.Compute(w))
}

// utsGroup is the goroutine baseline: above utsGoDepth, one goroutine per
// child, each writing its own slot; below it, utsSeq.
func utsGroup(newGroup func() benchGroup, n utsNode) utsResult {
	if n.depth >= utsGoDepth {
		return utsSeq(n)
	}
	r := n.visit()
	k := n.kids()
	if k == 0 {
		return r
	}
	parts := make([]utsResult, k)
	g := newGroup()
	for i := range k {
		g.Go(func() { parts[i] = utsGroup(newGroup, n.child(i)) })
	}
	g.Wait()
	for _, p := range parts {
		r = r.add(p)
	}
	return r
}

// utsStatic walks the root's subtrees in one static chunk of root children
// per GOMAXPROCS, one goroutine each: the hand-chunked loop.
func utsStatic(g benchGroup) utsResult {
	parts := make([]utsResult, len(benchChunks(utsRootKids)))
	forChunks(g, utsRootKids, func(k, lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[k] = parts[k].add(utsSeq(utsRoot.child(i)))
		}
	})
	r := utsRoot.visit()
	for _, p := range parts {
		r = r.add(p)
	}
	return r
}

// utsTopLevel is magpie.For over the root's children, each subtree walked
// sequentially: the helper balances the top level, not the subtrees.
func utsTopLevel(r forkjoin.Runner) utsResult {
	parts := make([]utsResult, utsRootKids)
	magpie.For(r, utsRootKids, func(i int) { parts[i] = utsSeq(utsRoot.child(i)) }, magpie.Grain(1))
	res := utsRoot.visit()
	for _, p := range parts {
		res = res.add(p)
	}
	return res
}

// BenchmarkUnbalancedTree walks the tree: magpie forks at every child
// (utsTask), magpie-toplevel parallelises the root's children only
// (magpie.For), static splits them into one chunk per GOMAXPROCS by hand,
// and the goroutine baselines start a goroutine per child down to depth
// utsGoDepth. ns/node is the time per node.
func BenchmarkUnbalancedTree(b *testing.B) {
	want := utsSeq(utsRoot)
	run := func(b *testing.B, fn func() utsResult) {
		b.ReportAllocs()
		b.ResetTimer()
		var got utsResult
		for range b.N {
			got = fn()
		}
		b.StopTimer()
		if got != want {
			b.Fatalf("walk = %+v, want %+v", got, want)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(want.nodes), "ns/node")
	}
	b.Run("impl=seq", func(b *testing.B) { run(b, func() utsResult { return utsSeq(utsRoot) }) })
	b.Run("impl=magpie", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() utsResult { return forkjoin.Invoke(p, utsMagpie) })
	})
	b.Run("impl=magpie-toplevel", func(b *testing.B) {
		p := benchPool(b)
		run(b, func() utsResult { return utsTopLevel(p) })
	})
	b.Run("impl=static", func(b *testing.B) {
		run(b, func() utsResult { return utsStatic(goroutineBaselines[0].newGroup()) })
	})
	for _, bl := range goroutineBaselines {
		b.Run("impl="+bl.name, func(b *testing.B) {
			run(b, func() utsResult { return utsGroup(bl.newGroup, utsRoot) })
		})
	}
}
