//go:build race

package task_test

// raceEnabled is true under -race, where element loops run ten times
// slower: the biggest size is then checked on one pool shape only.
const raceEnabled = true
