package ghevent

import "testing"

// The kinds table is consistent: one row per event, routing only for what
// the App queues, and Decode's Handled filter read from it.
func TestKindsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if seen[k.Name] {
			t.Errorf("%s listed twice", k.Name)
		}
		seen[k.Name] = true
		handled := len(k.Actions) > 0 || k.Sweep
		switch {
		case k.Sweep && (k.App || len(k.Actions) > 0):
			t.Errorf("%s: a sweep reaches the Action only and handles every action", k.Name)
		case k.Routing != NotQueued && !(k.App && handled):
			t.Errorf("%s: routed but not an App event autopilot handles", k.Name)
		case k.App && handled && k.Routing == NotQueued:
			t.Errorf("%s: the App handles it but queues it nowhere", k.Name)
		}
		for _, a := range append([]string{"some-other-action"}, k.Actions...) {
			ev, err := Decode(k.Name, []byte(`{"action":"`+a+`"}`))
			if err != nil {
				continue // a handled event lacking its members: refused, fine
			}
			if ev.Handled != k.Handles(a) || ev.Sweep != k.Sweep {
				t.Errorf("Decode(%s.%s): Handled %v Sweep %v, table says %v %v", k.Name, a, ev.Handled, ev.Sweep, k.Handles(a), k.Sweep)
			}
		}
		if Routed(k.Name) != k.App {
			t.Errorf("Routed(%s) = %v", k.Name, Routed(k.Name))
		}
	}
	if Routed("star") || handles("star", "created") || RoutingOf("star") != NotQueued {
		t.Error("an event outside the table is routed or handled")
	}
}
