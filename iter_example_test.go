package magpie_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/magpie-go/magpie"
)

func ExampleForSeq() {
	// The total length of the words of a map's keys: the map is iterated
	// on the caller only, the bodies run in parallel.
	words := map[string]bool{"fork": true, "join": true, "steal": true}
	var total atomic.Int64
	magpie.ForSeq(nil, maps.Keys(words), func(w string) { total.Add(int64(len(w))) })
	fmt.Println(total.Load())
	// Output: 13
}

func ExampleMapSeq() {
	// Results come in the order of the input; breaking out of the loop
	// stops the input and every task of the loop.
	lines := slices.Values([]string{"a b", "c", "d e f", "g"})
	for n := range magpie.MapSeq(nil, lines, func(l string) int { return len(strings.Fields(l)) }) {
		if n > 2 {
			break
		}
		fmt.Println(n)
	}
	// Output:
	// 2
	// 1
}

func ExampleSortStableByKey() {
	// Sort by a computed key (here the lower-cased name), computed once
	// per element; equal keys keep their input order.
	names := []string{"bob", "Alice", "carol", "alice", "Bob"}
	magpie.SortStableByKey(nil, names, strings.ToLower)
	fmt.Println(names)
	// Output: [Alice alice bob Bob carol]
}

func ExampleSortByKey() {
	words := []string{"banana", "kiwi", "apple", "fig"}
	magpie.SortByKey(nil, words, func(w string) int { return len(w) })
	fmt.Println(words)
	// Output: [fig kiwi apple banana]
}
