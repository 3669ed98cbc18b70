package ghevent

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/doctable"
)

// The App manifest in docs/app.md subscribes to exactly the events the
// kinds table has the App handle. GitHub sends the installation events
// to every App unasked, and refuses them in a manifest.
func TestDocsManifestSubscribesToTheHandledAppEvents(t *testing.T) {
	md, err := doctable.Read("docs/app.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(md, `"default_events": [`)
	list, _, closed := strings.Cut(rest, "]")
	if !ok || !closed {
		t.Fatal(`docs/app.md has no "default_events": [...] in its manifest`)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(list, -1) {
		documented = append(documented, m[1])
	}
	var handled []string
	for _, k := range Kinds() {
		if k.App && len(k.Actions) > 0 {
			handled = append(handled, k.Name)
		}
	}
	slices.Sort(documented)
	slices.Sort(handled)
	if !slices.Equal(documented, handled) {
		t.Errorf("docs/app.md's manifest subscribes to %v; the kinds table has the App handle %v", documented, handled)
	}
}
