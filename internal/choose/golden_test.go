package choose

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	transcript.Golden(t, filepath.Join("testdata", name+".golden"), got, *update)
}
