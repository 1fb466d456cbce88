package magpie_test

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/magpie-go/magpie"
)

func ExampleForInit() {
	// One scratch buffer per piece, never shared by two calls at once.
	lines := make([]string, 5)
	magpie.ForInit(nil, len(lines), func() *strings.Builder { return new(strings.Builder) },
		func(b *strings.Builder, i int) {
			b.Reset()
			fmt.Fprintf(b, "line %d", i)
			lines[i] = b.String()
		})
	fmt.Println(lines)
	// Output: [line 0 line 1 line 2 line 3 line 4]
}

func ExampleMapInit() {
	words := []string{"fork", "join", "steal"}
	out := magpie.MapInit(nil, words, func() []byte { return make([]byte, 0, 16) },
		func(buf []byte, w string) string {
			return string(strconv.AppendQuote(buf[:0], w))
		})
	fmt.Println(out)
	// Output: ["fork" "join" "steal"]
}

func ExampleMinFunc() {
	type job struct {
		name string
		prio int
	}
	jobs := []job{{"a", 3}, {"b", 1}, {"c", 2}, {"d", 1}}
	byPrio := func(x, y job) int { return cmp.Compare(x.prio, y.prio) }
	// The first of the equal extremes, as slices.MinFunc and MaxFunc.
	fmt.Println(magpie.MinFunc(nil, jobs, byPrio).name, magpie.MaxFunc(nil, jobs, byPrio).name)
	// Output: b a
}

func ExampleScan() {
	xs := []int{1, 2, 3, 4, 5}
	magpie.Scan(nil, xs, func(a, b int) int { return a + b })
	fmt.Println(xs)
	// Output: [1 3 6 10 15]
}

func ExamplePrefixSum() {
	// Running balances from a list of movements.
	balances := []int64{100, -30, 45, -15, 0, 20}
	magpie.PrefixSum(nil, balances)
	fmt.Println(balances)
	// Output: [100 70 115 100 100 120]
}

func ExampleFilterMap() {
	fields := strings.Fields("12 x 7 -3 y")
	nums := magpie.FilterMap(nil, fields, func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil
	})
	fmt.Println(nums)
	// Output: [12 7 -3]
}

func ExampleMap2() {
	prices := []float64{2, 3.5, 10}
	qty := []int{3, 2, 1}
	fmt.Println(magpie.Map2(nil, prices, qty, func(p float64, q int) float64 { return p * float64(q) }))
	// Output: [6 7 10]
}

func ExampleForChunks() {
	// Exact chunks of 4: the last one is shorter.
	sums := make([]int, 3)
	magpie.ForChunks(nil, 10, 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sums[lo/4] += i
		}
	})
	fmt.Println(sums)
	// Output: [6 22 17]
}
