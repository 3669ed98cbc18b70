package ghevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// MaxPayloadBytes is the largest payload Decode accepts: GitHub caps webhook
// deliveries at 25 MiB, so anything larger did not come from GitHub.
const MaxPayloadBytes = 25 << 20

// PayloadError reports a payload that Decode refuses: malformed or oversized
// JSON, a member of the wrong type, or a handled event missing a member it
// needs. Every error Decode returns is a *PayloadError.
type PayloadError struct {
	// Event is the event name passed to Decode.
	Event string
	// Field is the dotted path of the offending member (e.g.
	// "issue.number"), empty when the payload as a whole is bad.
	Field string
	// Reason says what is wrong with Field ("missing", "invalid ...") or
	// with the payload.
	Reason string
	// Err is the underlying decoding error, if any.
	Err error
}

func (e *PayloadError) Error() string {
	event := e.Event
	if event == "" {
		event = "event"
	}
	switch {
	case e.Field != "" && e.Reason == "missing":
		return event + ": missing " + e.Field
	case e.Field != "":
		return event + ": " + e.Field + ": " + e.Reason
	case e.Err != nil:
		return event + ": " + e.Reason + ": " + e.Err.Error()
	}
	return event + ": " + e.Reason
}

func (e *PayloadError) Unwrap() error { return e.Err }

// Decode decodes the payload of the event called name (the X-GitHub-Event
// header or GITHUB_EVENT_NAME) into an Event.
//
// Events and actions autopilot does not act on decode with Handled=false and
// a nil error, as long as the payload is a well-formed JSON object. A handled
// event missing what autopilot needs to route it (repository, issue number,
// comment id, ...) is an error naming the missing member, as is malformed
// JSON, a member of the wrong type, or a payload over MaxPayloadBytes.
// schedule and workflow_dispatch need no repository (Actions passes
// GITHUB_REPOSITORY instead); Repo is filled when the payload has one.
func Decode(name string, payload []byte) (*Event, error) {
	if name == "" {
		return nil, &PayloadError{Reason: "missing event name"}
	}
	if len(payload) > MaxPayloadBytes {
		return nil, &PayloadError{Event: name, Reason: fmt.Sprintf("payload of %d bytes exceeds the %d-byte limit", len(payload), MaxPayloadBytes)}
	}
	if t := bytes.TrimLeft(payload, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, &PayloadError{Event: name, Reason: "payload is not a JSON object"}
	}
	return decodeAs(name, payload, payloadFor(name))
}

// decodeAs decodes payload into p and turns it into an Event, checking what a
// handled event needs.
func decodeAs(name string, payload []byte, p eventPayload) (*Event, error) {
	if err := unmarshal(name, payload, p); err != nil {
		return nil, err
	}
	ev, err := fromEnvelope(name, p.env())
	if err != nil {
		return nil, err
	}
	p.fill(ev)
	if ev.Handled {
		if err := p.check(ev); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// unmarshal decodes payload into v, reporting type errors with the path of
// the offending member.
func unmarshal(name string, payload []byte, v any) error {
	err := json.Unmarshal(payload, v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		// Members of the embedded envelope are reported as "envelope.x".
		field := strings.TrimPrefix(typeErr.Field, "envelope.")
		reason := fmt.Sprintf("wrong type: got JSON %s, want %s", typeErr.Value, jsonKind(typeErr.Type))
		return &PayloadError{Event: name, Field: field, Reason: reason, Err: err}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return &PayloadError{Event: name, Reason: "malformed JSON", Err: err}
	}
	// e.g. a timestamp that is not RFC 3339.
	return &PayloadError{Event: name, Reason: "invalid member", Err: err}
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// fromEnvelope starts an Event from the members every payload shares.
func fromEnvelope(name string, env *envelope) (*Event, error) {
	ev := &Event{
		Name:    name,
		Action:  env.Action,
		Handled: handles(name, env.Action),
		Sweep:   sweeps(name),
	}
	if env.Repository != nil && env.Repository.FullName != "" {
		if !validRepo(env.Repository.FullName) {
			return nil, &PayloadError{Event: name, Field: "repository.full_name", Reason: fmt.Sprintf("invalid %q (want owner/name)", env.Repository.FullName)}
		}
		ev.Repo = env.Repository.FullName
	}
	if env.Installation != nil {
		ev.Installation = env.Installation.ID
	}
	ev.Sender = env.Sender.user()
	return ev, nil
}

func missing(event, field string) error {
	return &PayloadError{Event: event, Field: field, Reason: "missing"}
}

// validRepo reports whether s looks like GitHub's "owner/name": an owner of
// letters, digits, '-' or '_', and a repository name of letters, digits, '.',
// '-' or '_' that is not "." or "..". Anything else could not have come from
// GitHub and must not reach an API path.
func validRepo(s string) bool {
	owner, repo, ok := strings.Cut(s, "/")
	if !ok || owner == "" || repo == "" || repo == "." || repo == ".." || strings.Contains(repo, "/") {
		return false
	}
	for _, r := range owner {
		if !isAlnum(r) && r != '-' && r != '_' {
			return false
		}
	}
	for _, r := range repo {
		if !isAlnum(r) && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
