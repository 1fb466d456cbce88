package magpie

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/forkjoin"
)

// pieceState is ForInit's and MapInit's state in the tests: body claims it
// with inUse, so two calls using one state at once are caught (and count,
// a plain int, makes -race catch them too), and next checks that a state
// sees a contiguous run of increasing indices.
type pieceState struct {
	inUse atomic.Int32
	first bool
	next  int
	count int
}

// pieceStates records the states init made.
type pieceStates struct {
	mu  sync.Mutex
	all []*pieceState
}

func (ps *pieceStates) init() *pieceState {
	st := &pieceState{first: true}
	ps.mu.Lock()
	ps.all = append(ps.all, st)
	ps.mu.Unlock()
	return st
}

// use claims st for index i and returns an error if another call holds it
// or i does not follow the previous index of st.
func (st *pieceState) use(i int) error {
	if !st.inUse.CompareAndSwap(0, 1) {
		return fmt.Errorf("index %d: state in use by another call", i)
	}
	defer st.inUse.Store(0)
	if !st.first && i != st.next {
		return fmt.Errorf("index %d after %d with the same state", i, st.next-1)
	}
	st.first, st.next = false, i+1
	st.count++
	return nil
}

// check verifies the claims of ForInit's doc about init: never for n == 0,
// once when the loop ran on the caller, states covering n indices in all,
// and with a Grain g each state serving at most g of them.
func (ps *pieceStates) check(r forkjoin.Runner, n int, opts []Option) error {
	if n == 0 {
		if len(ps.all) != 0 {
			return fmt.Errorf("init called %d times for n = 0", len(ps.all))
		}
		return nil
	}
	grain := collectOptions(opts).grain
	if smallInline(r, n, grain) && len(ps.all) != 1 {
		return fmt.Errorf("init called %d times on the caller's path", len(ps.all))
	}
	total := 0
	for _, st := range ps.all {
		total += st.count
		if grain > 0 && st.count > grain && len(ps.all) > 1 {
			return fmt.Errorf("a state served %d indices, grain %d", st.count, grain)
		}
	}
	if total != n {
		return fmt.Errorf("states served %d indices, want %d", total, n)
	}
	return nil
}

func TestForInit(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		var ps pieceStates
		hits := make([]int32, n)
		var bad atomic.Value
		ForInit(r, n, ps.init, func(st *pieceState, i int) {
			if err := st.use(i); err != nil {
				bad.Store(err)
			}
			atomic.AddInt32(&hits[i], 1)
		}, opts...)
		if err, _ := bad.Load().(error); err != nil {
			return err
		}
		for i, h := range hits {
			if h != 1 {
				return fmt.Errorf("index %d visited %d times", i, h)
			}
		}
		return ps.check(r, n, opts)
	})
}

func TestMapInit(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		var ps pieceStates
		in := ints(n)
		var bad atomic.Value
		// The state is also a scratch buffer, the typical use: each call
		// formats into the buffer of its piece.
		type scratch struct {
			*pieceState
			buf []byte
		}
		got := MapInit(r, in, func() *scratch { return &scratch{pieceState: ps.init()} },
			func(st *scratch, x int) string {
				if err := st.use(st.next); err != nil { // concurrency only: f gets no index
					bad.Store(err)
				}
				st.buf = strconv.AppendInt(st.buf[:0], int64(x), 10)
				return string(st.buf)
			}, opts...)
		if err, _ := bad.Load().(error); err != nil {
			return err
		}
		if len(got) != n {
			return fmt.Errorf("len %d", len(got))
		}
		for i, x := range in {
			if got[i] != strconv.Itoa(x) {
				return fmt.Errorf("index %d: %q", i, got[i])
			}
		}
		return ps.check(r, n, opts)
	})
}

func TestPerPieceInputs(t *testing.T) {
	initInt := func() int { return 0 }
	require.PanicsWithValue(t, "magpie: ForInit called with a nil init", func() { ForInit[int](nil, 3, nil, func(int, int) {}) })
	require.PanicsWithValue(t, "magpie: ForInit called with a nil body", func() { ForInit(nil, 3, initInt, nil) })
	require.PanicsWithValue(t, "magpie: ForInit called with a negative n", func() { ForInit(nil, -1, initInt, func(int, int) {}) })
	require.PanicsWithValue(t, "magpie: MapInit called with a nil init", func() {
		MapInit[int, int, int](nil, []int{1}, nil, func(int, int) int { return 0 })
	})
	require.PanicsWithValue(t, "magpie: MapInit called with a nil function", func() {
		MapInit[int, int](nil, []int{1}, initInt, nil)
	})
	require.Equal(t, []int{}, MapInit(nil, []int{}, func() int { panic("not called") }, func(int, int) int { return 0 }))
}

// testGoid returns the id of the calling goroutine, read from the header
// of runtime.Stack ("goroutine 18 [running]:").
func testGoid() uint64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	id, err := strconv.ParseUint(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// TestPieceStateMadeWhereItRuns: inside a task (no probe, whose caller
// may pass its state to a worker), every state of ForInit, MapInit and
// ReduceWith is made by init on the goroutine that runs the piece it
// starts, so that a worker's small states do not come from another
// worker's allocation cache and share cache lines with its states
// (split.go, freshRangeTask). Fails before: the forked half's state was
// made by the worker that split, and a stolen half ran on another.
func TestPieceStateMadeWhereItRuns(t *testing.T) {
	p, _ := testPools(t)
	const n = 4000
	type state struct{ goid uint64 }
	in := make([]int, n)
	for round := range 5 {
		var made, moved atomic.Int64
		newState := func() *state { made.Add(1); return &state{testGoid()} }
		use := func(s *state) {
			if s.goid != testGoid() {
				moved.Add(1)
			}
		}
		forkjoin.Run(p, func(w *forkjoin.Worker) struct{} {
			ForInit(w, n, newState, func(s *state, _ int) { use(s) })
			MapInit(w, in, newState, func(s *state, x int) int { use(s); return x })
			ReduceWith(w, in, newState, func(s *state, _ int) *state { use(s); return s },
				func(a, b *state) *state { return a })
			return struct{}{}
		})
		what := fmt.Sprintf("round %d", round)
		require.Greater(t, made.Load(), int64(3), what+": the loops split")
		require.Zero(t, moved.Load(), what+": calls on a state made by another goroutine")
	}
}

// TestReduceWithAccumulatorPerPiece: ReduceWith's newAcc as ForInit's
// init (pieceStates.check): once in all when the loop runs on the caller,
// one accumulator per piece otherwise, never shared by two folds at once,
// each folding a contiguous run of increasing elements, at most g of them
// with Grain(g), every element folded once.
func TestReduceWithAccumulatorPerPiece(t *testing.T) {
	forEachConfig(t, func(r forkjoin.Runner, n int, opts []Option) error {
		if n == 0 {
			return nil // no piece: ReduceWith returns a fresh accumulator
		}
		var ps pieceStates
		in := ints(n)
		for i := range in {
			in[i] = i // fold sees the index
		}
		var bad atomic.Value
		ReduceWith(r, in, ps.init, func(st *pieceState, i int) *pieceState {
			if err := st.use(i); err != nil {
				bad.Store(err)
			}
			return st
		}, func(a, b *pieceState) *pieceState { return a }, opts...)
		if err, _ := bad.Load().(error); err != nil {
			return err
		}
		return ps.check(r, n, opts)
	})
}
