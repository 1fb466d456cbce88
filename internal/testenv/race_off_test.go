//go:build !race

package testenv_test

const builtWithRaceTag = false
