package sorts

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateSortOrdered = flag.Bool("update-sort-ordered", false,
	"rewrite quick_ordered.go from quick_func.go")

// quick_ordered.go is generated from quick_func.go, as the
// standard library generates zsortordered.go from zsortfunc.go: the same
// algorithm with cmp.Less inlined instead of calls through a comparison
// function. TestSortOrderedGenerated keeps the two in step; after editing
// quick_func.go run
//
//	go generate   (or: go test -run TestSortOrderedGenerated -update-sort-ordered .)
//
//go:generate go test -run TestSortOrderedGenerated -update-sort-ordered .
func TestSortOrderedGenerated(t *testing.T) {
	src, err := os.ReadFile("quick_func.go")
	if err != nil {
		t.Fatal(err)
	}
	want := orderedVariant(string(src))
	if *updateSortOrdered {
		if err := os.WriteFile("quick_ordered.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("quick_ordered.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("quick_ordered.go is out of date with quick_func.go: run go generate")
	}
}

// orderedVariant rewrites the comparison-function quicksort into the
// cmp.Ordered one.
func orderedVariant(s string) string {
	const arg = `([\w\.]+(?:\[[^\]]*\])?)`
	s = strings.Replace(s,
		"// The parallel pattern-defeating quicksort behind Func. quick_ordered.go\n"+
			"// is the same code for cmp.Ordered (comparisons inlined instead of calls\n"+
			"// through cmp); keep the two in step, line for line.",
		"// The parallel pattern-defeating quicksort behind Sort: quick_func.go\n"+
			"// with cmp.Less inlined in place of calls through a comparison function (a\n"+
			"// call per comparison would cost Sort a third of its speed). Keep the two\n"+
			"// in step, line for line.", 1)
	s = regexp.MustCompile(`!\(cmp\(`+arg+`, `+arg+`\) < 0\)`).ReplaceAllString(s, `!cmp.Less($1, $2)`)
	s = regexp.MustCompile(`\bcmp\(`+arg+`, `+arg+`\) < 0`).ReplaceAllString(s, `cmp.Less($1, $2)`)
	s = strings.ReplaceAll(s, ", cmp func(a, b E) int)", ")")
	s = strings.ReplaceAll(s, ", cmp)", ")")
	s = strings.ReplaceAll(s, ", t.cmp)", ")")
	s = regexp.MustCompile(`\n\tcmp +func\(a, b E\) int\n`).ReplaceAllString(s, "\n")
	for _, r := range [][2]string{
		{"data, p, cmp := st.data, st.p, st.cmp", "data, p := st.data, st.p"},
		{"p: data[a], cmp: cmp,", "p: data[a],"},
		{"CmpFunc", "Ordered"},
		{"[E any]", "[E cmp.Ordered]"},
		{"slices.SortFunc(data[a:b])", "slices.Sort(data[a:b])"},
		{"go to slices.SortFunc", "go to slices.Sort"},
		{"a panicking cmp leaves a permutation", "it never loses an element"},
		{"import (\n\t\"slices\"", "import (\n\t\"cmp\"\n\t\"slices\""},
		{"adaptive, cmp}", "adaptive}"},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return "// Code generated from quick_func.go by TestSortOrderedGenerated (quick_gen_test.go); DO NOT EDIT.\n\n" + s
}
