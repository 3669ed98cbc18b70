package route

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// Every event kind ghevent marks as handled has a handler here or is
// routed by the table alone (its Concerns), and no handler waits for an
// event ghevent would never hand over.
func TestEveryHandledEventKindHasAHandler(t *testing.T) {
	handled := map[string]bool{}
	for _, k := range ghevent.Kinds() {
		if len(k.Actions) > 0 || k.Sweep {
			handled[k.Name] = true
			_, ok := eventHandlers[k.Name]
			if !ok && k.Concerns == ghevent.ConcernsOwnHandler {
				t.Errorf("event %s is handled by ghevent but has no handler, and the table says of no issue it concerns", k.Name)
			}
			if ok && k.Concerns != ghevent.ConcernsOwnHandler {
				t.Errorf("event %s has a handler here and the table routes it too", k.Name)
			}
		}
	}
	for name := range eventHandlers {
		if !handled[name] {
			t.Errorf("handler for %s, which ghevent never marks handled", name)
		}
	}
}
