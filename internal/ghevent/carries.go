package ghevent

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
)

// Event.Carries is an interface, so as JSON (the App's Redis queue stores
// decoded events as JSON) it is kept with the name of its engine event:
// {"event": name, "data": {...}}, decoded back by the kinds whose
// payloads carry that type (carrier).

// carrier is a payload whose fill sets Event.Carries to an engine event of
// one type: carried is its zero value.
type carrier interface {
	carried() events.Event
}

// carriedJSON is Carries as JSON.
type carriedJSON struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// MarshalJSON writes the event with Carries named (carriedJSON).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	out := struct {
		plain
		Carries *carriedJSON `json:",omitempty"`
	}{plain: plain(e)}
	if e.Carries != nil {
		b, err := json.Marshal(e.Carries)
		if err != nil {
			return nil, err
		}
		out.Carries = &carriedJSON{Event: events.Name(e.Carries), Data: b}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote; a carried event of a type
// no kind carries is an error.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var in struct {
		plain
		Carries *carriedJSON `json:",omitempty"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*e = Event(in.plain)
	e.Carries = nil
	if in.Carries == nil {
		return nil
	}
	zero, ok := carriedTypes()[in.Carries.Event]
	if !ok {
		return fmt.Errorf("ghevent: carried event %q is of no kind", in.Carries.Event)
	}
	p := reflect.New(reflect.TypeOf(zero))
	if err := json.Unmarshal(in.Carries.Data, p.Interface()); err != nil {
		return fmt.Errorf("ghevent: carried event %q: %w", in.Carries.Event, err)
	}
	e.Carries = p.Elem().Interface().(events.Event)
	return nil
}

// carriedTypes maps the name of every engine event a kind carries to its
// zero value.
func carriedTypes() map[string]events.Event {
	out := map[string]events.Event{}
	for _, p := range payloads() {
		if c, ok := p.(carrier); ok {
			out[events.Name(c.carried())] = c.carried()
		}
	}
	return out
}
