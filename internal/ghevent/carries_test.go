package ghevent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// An event that carries an engine event survives JSON (the App's Redis
// queue stores decoded events as JSON): Carries comes back as the same
// engine event type, with its fields.
func TestCarriedEventSurvivesJSON(t *testing.T) {
	const file = "deployment_protection_rule.requested.json"
	ev, err := Decode(ghtest.EventName(file), ghtest.Payload(t, file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if !reflect.DeepEqual(&back, ev) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, *ev)
	}
	var plain Event
	if err := json.Unmarshal([]byte(`{"Name":"issues","Carries":{"event":"no-such-event","data":{}}}`), &plain); err == nil {
		t.Error("an unknown carried event decoded")
	}
}
