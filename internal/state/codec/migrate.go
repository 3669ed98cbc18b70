package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Schema 1 named the tracker fields after Jira although they serve every
// tracker (Jira, GitHub sub-issues, local). Schema 2 renamed them; a
// schema-1 machine block is read by renaming its keys, so comments written
// before the rename keep working. Nothing else changed between the two.
var (
	// v1StateKeys maps schema 1's top-level state keys to schema 2's.
	v1StateKeys = map[string]string{
		"jira_enabled":       "tracker_enabled",
		"jira_off":           "tracker_off",
		"jira_note":          "tracker_note",
		"jira_retry_at":      "tracker_retry_at",
		"pending_jira_check": "pending_auth_check",
	}
	// v1TaskKeys maps schema 1's task keys to schema 2's.
	v1TaskKeys = map[string]string{
		"jira":     "sync",
		"jira_key": "key",
		"jira_url": "url",
	}
)

// v1Sig matches the signature a schema-1 state ends with: Sig is State's
// last field, so Go's encoder wrote it last.
var v1Sig = regexp.MustCompile(`,"sig":"[0-9a-f]{64}"}$`)

// migrateV1 returns the schema-2 JSON of a schema-1 state, and the bytes
// its signature covers (the schema-1 JSON without "sig", exactly as Render
// signed it then). A schema-1 state that already holds a schema-2 key is
// refused: Render never wrote one.
func migrateV1(raw []byte) (migrated, signed []byte, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, fmt.Errorf("schema 1 state: %w", err)
	}
	if err := renameKeys(top, v1StateKeys); err != nil {
		return nil, nil, fmt.Errorf("schema 1 state: %w", err)
	}
	if ts, ok := top["tasks"]; ok && !bytes.Equal(ts, []byte("null")) {
		var tasks []map[string]json.RawMessage
		if err := json.Unmarshal(ts, &tasks); err != nil {
			return nil, nil, fmt.Errorf("schema 1 tasks: %w", err)
		}
		for i, t := range tasks {
			if err := renameKeys(t, v1TaskKeys); err != nil {
				return nil, nil, fmt.Errorf("schema 1 tasks[%d]: %w", i, err)
			}
		}
		if top["tasks"], err = json.Marshal(tasks); err != nil {
			return nil, nil, fmt.Errorf("schema 1 tasks: %w", err)
		}
	}
	if !bytes.Equal(top["schema"], []byte("1")) {
		return nil, nil, fmt.Errorf("schema 1 envelope holds a state of schema %s", top["schema"])
	}
	top["schema"] = json.RawMessage(fmt.Sprint(state.SchemaVersion))
	if migrated, err = json.Marshal(top); err != nil {
		return nil, nil, fmt.Errorf("schema 1 state: %w", err)
	}
	signed = raw
	if loc := v1Sig.FindIndex(raw); loc != nil {
		signed = append(append([]byte{}, raw[:loc[0]]...), '}')
	}
	return migrated, signed, nil
}

// trackerOfV1 is the tracker a schema-1 state used, which it did not
// record (State.TrackerInUse): GitHub after the gate's answer or when a
// task is a sub-issue (#12), none when no tracker was configured, Jira when
// a task has a Jira key; unknown ("") otherwise.
func trackerOfV1(s *state.State) state.Tracker {
	switch {
	case s.Tracker == state.TrackerGitHub:
		return state.TrackerGitHub
	case s.TrackerOff == state.TrackerNotConfigured:
		return state.TrackerLocal
	}
	for _, t := range s.Tasks {
		switch {
		case strings.HasPrefix(t.Key, "#"):
			return state.TrackerGitHub
		case t.Key != "":
			return state.TrackerJira
		}
	}
	return ""
}

// renameKeys renames obj's keys by names, refusing a key that is already
// a new name.
func renameKeys(obj map[string]json.RawMessage, names map[string]string) error {
	for _, to := range names {
		if _, ok := obj[to]; ok {
			return fmt.Errorf("key %q is schema 2's", to)
		}
	}
	for from, to := range names {
		if v, ok := obj[from]; ok {
			obj[to] = v
			delete(obj, from)
		}
	}
	return nil
}
