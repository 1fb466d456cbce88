// Package testenv holds what the tests of every magpie package share: the
// build they run in (Race) and the hang limits of concurrency tests
// (HangTimeout, Within, WaitUntil). Only tests import it; the library does
// not.
//
// It reads the build's settings instead of using build tags, so that no
// file of the module differs between race and non-race builds.
package testenv

import "runtime/debug"

// Race reports whether the test binary was built with -race. The race
// detector slows the largest stress loops about tenfold; tests use Race to
// size them down.
var Race = builtWithRace()

func builtWithRace() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
