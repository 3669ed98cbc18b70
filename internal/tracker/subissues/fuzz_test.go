package subissues

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// FuzzTaskMarker: the hidden marker round-trips, the parser never panics on
// any body, and no escaped user text can carry a marker.
func FuzzTaskMarker(f *testing.F) {
	f.Add("text <!-- autopilot:task autopilot-0123456789 parent=12 kind=task -->", 12, "task")
	f.Add("<!-- autopilot:task autopilot-abcdef0123 parent=1 kind=batch -->", 1, "batch")
	f.Add("&lt;!-- autopilot:task", 99, "epic")
	f.Fuzz(func(t *testing.T, body string, parent int, kind string) {
		readMarker(body) // must not panic
		if _, ok := readMarker(textsafe.Escape(body)); ok {
			t.Fatalf("escaped user text carries a marker: %q", textsafe.Escape(body))
		}
		if parent <= 0 || parent > 999999999 || (kind != "epic" && kind != "task" && kind != "batch") {
			return
		}
		m := marker{key: idem.Key("o/r", parent, body), parent: parent, kind: kind}
		got, ok := readMarker("desc\n\n" + m.String())
		if !ok || got != m {
			t.Fatalf("marker %+v read back as %+v, %v", m, got, ok)
		}
		if strings.Count(m.String(), "\n") != 0 {
			t.Fatalf("marker spans lines: %q", m.String())
		}
	})
}
