// Command mapreduce counts word frequencies over generated text with
// magpie.Reduce (each piece of the input fills a map of its own, maps are
// merged in order) and compares it with a sequential loop measured in the
// same run.
//
//	go run ./examples/mapreduce                 # 2M lines, all cores
//	go run ./examples/mapreduce -lines 500000 -p 2
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/magpie-go/magpie"
	"github.com/magpie-go/magpie/forkjoin"
)

// vocabulary is a small Zipf-distributed vocabulary: a few words are very
// frequent, most are rare, as in real text.
var vocabulary = strings.Fields(`the of and to in a is that for it as was with be by on
	not he this are or his from at which but have an they you were her she there one all
	we their has been if more when will would who so no fork join pool worker steal deque
	task split range map reduce sort merge pivot cutoff grain surplus thief park wake`)

// generate returns n lines of 4 to 15 words each.
func generate(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(rng, 1.2, 1, uint64(len(vocabulary)-1))
	lines := make([]string, n)
	var b strings.Builder
	for i := range lines {
		b.Reset()
		for w := range 4 + rng.IntN(12) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocabulary[zipf.Uint64()])
		}
		lines[i] = b.String()
	}
	return lines
}

// countLine adds the words of one line to counts, which it creates on the
// first line of a piece: Reduce copies its zero (a nil map) into every
// piece, so each piece must own its map.
func countLine(counts map[string]int, line string) map[string]int {
	if counts == nil {
		counts = make(map[string]int, len(vocabulary))
	}
	for w := range strings.FieldsSeq(line) {
		counts[w]++
	}
	return counts
}

// merge adds b into a; it is associative, and a nil map is its identity.
func merge(a, b map[string]int) map[string]int {
	if a == nil {
		return b
	}
	for w, c := range b {
		a[w] += c
	}
	return a
}

func main() {
	nLines := flag.Int("lines", 2_000_000, "lines of generated text")
	par := flag.Int("p", 0, "workers (0: GOMAXPROCS)")
	flag.Parse()

	lines := generate(*nLines, 42)
	pool := forkjoin.New(forkjoin.WithParallelism(*par))
	defer pool.Close()

	// Warm up both paths once (page faults, pool start), then measure.
	seq := func() map[string]int {
		var counts map[string]int
		for _, line := range lines {
			counts = countLine(counts, line)
		}
		return counts
	}
	par1 := func() map[string]int {
		return magpie.Reduce(pool, lines, nil, countLine, merge)
	}
	seq()
	par1()

	t0 := time.Now()
	want := seq()
	tSeq := time.Since(t0)
	t0 = time.Now()
	got := par1()
	tPar := time.Since(t0)

	if len(got) != len(want) {
		fmt.Fprintln(os.Stderr, "FAIL: different vocabularies")
		os.Exit(1)
	}
	total := 0
	for w, c := range want {
		if got[w] != c {
			fmt.Fprintf(os.Stderr, "FAIL: %q counted %d times, want %d\n", w, got[w], c)
			os.Exit(1)
		}
		total += c
	}
	words := make([]string, 0, len(got))
	for w := range got {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int { return got[b] - got[a] })
	fmt.Printf("%d lines, %d words, %d distinct; most frequent:", len(lines), total, len(words))
	for _, w := range words[:5] {
		fmt.Printf(" %s=%d", w, got[w])
	}
	fmt.Println()
	fmt.Printf("sequential loop: %v\n", tSeq.Round(time.Microsecond))
	fmt.Printf("magpie.Reduce:   %v on %d workers (GOMAXPROCS %d)\n",
		tPar.Round(time.Microsecond), pool.Parallelism(), runtime.GOMAXPROCS(0))
	fmt.Printf("speedup:         %.2fx\n", float64(tSeq)/float64(tPar))
}
