package engine

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares a text that is the product (a Choose block, a reply)
// with testdata/<name>.golden, exactly; -update rewrites the file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	transcript.Golden(t, filepath.Join("testdata", name+".golden"), got, *update)
}
