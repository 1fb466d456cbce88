package forkjoin_test

import (
	"fmt"
	"sync/atomic"

	"github.com/magpie-go/magpie/forkjoin"
)

// dir is a node of a directory-like tree.
type dir struct {
	files int
	subs  []*dir
}

// makeTree builds a tree of the given depth where each directory holds
// depth files and depth subdirectories.
func makeTree(depth int) *dir {
	d := &dir{files: depth}
	for i := 0; i < depth; i++ {
		d.subs = append(d.subs, makeTree(depth-1))
	}
	return d
}

// Scopes fit work whose shape is discovered as it runs: each directory
// spawns a task per subdirectory, from whichever worker visits it, and
// RunScope returns when the whole tree has been counted.
func ExampleRunScope() {
	pool := forkjoin.New()
	defer pool.Close()
	root := makeTree(6)

	var files atomic.Int64
	forkjoin.Invoke(pool, func(w *forkjoin.Worker) int {
		forkjoin.RunScope(w, func(s *forkjoin.Scope, w *forkjoin.Worker) {
			var visit func(w *forkjoin.Worker, d *dir)
			visit = func(w *forkjoin.Worker, d *dir) {
				files.Add(int64(d.files))
				for _, sub := range d.subs {
					s.Spawn(w, func(w *forkjoin.Worker) { visit(w, sub) })
				}
			}
			visit(w, root)
		})
		return 0
	})
	fmt.Println(files.Load())
	// Output: 1956
}

// ScopeOn opens a scope from wherever the caller is: here from outside
// any pool, on the pool given (a nil Runner would mean Default()). It
// returns when every spawned task has finished.
func ExampleScopeOn() {
	pool := forkjoin.New(forkjoin.WithParallelism(2))
	defer pool.Close()
	root := makeTree(5)

	var files atomic.Int64
	forkjoin.ScopeOn(pool, func(s *forkjoin.Scope, w *forkjoin.Worker) {
		var visit func(w *forkjoin.Worker, d *dir)
		visit = func(w *forkjoin.Worker, d *dir) {
			files.Add(int64(d.files))
			for _, sub := range d.subs {
				s.Spawn(w, func(w *forkjoin.Worker) { visit(w, sub) })
			}
		}
		visit(w, root)
	})
	fmt.Println(files.Load())
	// Output: 325
}
