package magpie

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The docs name the test or benchmark behind each claim (docs/design.md,
// docs/benchmarks.md, docs/reliability.md, README.md, and the doc comments
// of the Go files). TestDocsNameRealTests keeps those names honest: every
// name the docs give is a function of some _test.go file of the repository
// (any module in it: bench and docs/plot too), so a renamed or deleted test
// cannot leave a claim pointing at nothing.

// docNameRE matches a test, benchmark, fuzz target or example name in the
// docs, with the two shorthands they use: a trailing * for every function
// of that prefix (TestMaxQueued*) and a brace list of suffixes
// (BenchmarkShortLoopInside{Cheap,Nested,Slow}).
var docNameRE = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz|Example)[A-Z_][A-Za-z0-9_]*)(\*|\{[A-Za-z0-9_,]+\})?`)

// testFuncRE matches the declaration of a test, benchmark, fuzz target or
// example.
var testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)[A-Za-z0-9_]*)\(`)

// docNamesOnBranches are names the docs give for code that was measured on
// a branch and not merged; the text next to each says so.
var docNamesOnBranches = []string{
	"BenchmarkStolenBlock", // docs/benchmarks.md: branch spawnd, "measured, not merged"
}

func TestDocsNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFuncRE.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, defined["TestDocsNameRealTests"], "the walk found no test files")

	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "README.md")
	// The package documentation and doc comments name tests too: every
	// non-test Go file of the repository, but for docs/plot, whose comments
	// quote the format of benchmark output ("BenchmarkName N value unit").
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == filepath.Join("docs", "plot") || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			docs = append(docs, path)
		}
		return nil
	})
	require.NoError(t, err)
	checked := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range docNameRE.FindAllStringSubmatch(string(text), -1) {
			name, suffix := m[1], m[2]
			if slices.Contains(docNamesOnBranches, name) {
				continue
			}
			checked++
			switch {
			case suffix == "*":
				found := false
				for d := range defined {
					found = found || strings.HasPrefix(d, name)
				}
				if !found {
					t.Errorf("%s names %s*, and no test function starts with %s", doc, name, name)
				}
			case strings.HasPrefix(suffix, "{"):
				for _, s := range strings.Split(strings.Trim(suffix, "{}"), ",") {
					if !defined[name+s] {
						t.Errorf("%s names %s (in %s%s), which no _test.go file defines", doc, name+s, name, suffix)
					}
				}
			default:
				if !defined[name] {
					t.Errorf("%s names %s, which no _test.go file defines", doc, name)
				}
			}
		}
	}
	require.Greater(t, checked, 300, "the docs name fewer tests than they did when this test was written: is the pattern still right?")
}

// TestDocNameRECatchesTheShorthands checks the pattern on the forms the
// docs use, so that TestDocsNameRealTests cannot pass by matching nothing.
func TestDocNameRECatchesTheShorthands(t *testing.T) {
	got := docNameRE.FindAllStringSubmatch("`TestMaxQueued*`, BenchmarkShortLoopInside{Cheap,Nested}, (TestSpawnFillsBlocks). Example_fib; Tests and Testing", -1)
	var names []string
	for _, m := range got {
		names = append(names, m[1]+m[2])
	}
	require.Equal(t, []string{"TestMaxQueued*", "BenchmarkShortLoopInside{Cheap,Nested}", "TestSpawnFillsBlocks", "Example_fib"}, names)
}
