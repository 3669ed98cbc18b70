package ghevent

import (
	"reflect"

	"github.com/autopilot-dev/autopilot/internal/ghevent/jsonproj"
)

// DecodeFast returns exactly what Decode returns for the same arguments —
// the same Event, or the same error — at a fraction of the cost for the
// large payloads GitHub sends: one hand-written pass checks the JSON and
// keeps only the members Decode reads (about a tenth of a typical payload),
// and encoding/json decodes that. The webhook server calls it on every
// delivery.
//
// Whatever the pass is unsure of — a payload it cannot prove well-formed,
// nesting deeper than it follows, an event shape it has no projection for,
// or any error at all — is handed to Decode, so errors always come from
// Decode itself.
func DecodeFast(name string, payload []byte) (*Event, error) {
	p := payloadFor(name)
	proj, ok := projections[reflect.TypeOf(p)]
	if !ok || name == "" || len(payload) > MaxPayloadBytes {
		return Decode(name, payload)
	}
	lean, ok := jsonproj.Project(payload, proj)
	if !ok {
		return Decode(name, payload)
	}
	ev, err := decodeAs(name, lean, p)
	if err != nil {
		return Decode(name, payload) // the error, with its offsets in payload
	}
	return ev, nil
}

// projections holds the projection of every payload type payloadFor
// returns, built once from the wire types' json tags. It is never written
// after package initialisation. An event whose payload type is missing here
// (a shape added to payloadFor later) is decoded by Decode.
var projections = buildProjections()

func buildProjections() map[reflect.Type]*jsonproj.Projection {
	out := map[reflect.Type]*jsonproj.Projection{}
	for _, p := range append([]eventPayload{bare()}, payloads()...) {
		t := reflect.TypeOf(p)
		out[t] = jsonproj.Of(t)
	}
	return out
}
