package sorts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// generatedVariants are the files gen_variants.go writes.
var generatedVariants = []string{"zquick_ordered.go", "zquick_func.go"}

// TestGeneratedVariantsUpToDate runs gen_variants.go into a temporary
// directory and requires the checked-in quicksort variants to be byte for
// byte what it writes: a hand edit of a generated file, or a template edit
// without go generate, fails here.
func TestGeneratedVariantsUpToDate(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run gen_variants.go:", err)
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), goTool, "run", "gen_variants.go", "-o", dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go run gen_variants.go: %s", out)
	for _, name := range generatedVariants {
		want, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what gen_variants.go writes: edit the template in gen_variants.go and run go generate ./internal/sorts", name)
		}
	}
}
