package testenv_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestRaceMatchesBuild checks Race against the build tag, the one place
// in the module where a race build tag remains (tests only).
func TestRaceMatchesBuild(t *testing.T) {
	require.Equal(t, builtWithRaceTag, testenv.Race)
}
