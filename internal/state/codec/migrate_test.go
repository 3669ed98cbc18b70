package codec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

// readV1 reads a state comment written by the last schema-1 build
// (testdata/v1, rendered from statetest.Sample before the rename).
func readV1(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v1", name+".comment"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseReadsSchema1Comments: a comment written before the tracker
// fields were renamed parses into the new fields (a signed one with its
// schema-1 signature), re-renders in schema 2 (golden), and that parses
// back to the same state.
func TestParseReadsSchema1Comments(t *testing.T) {
	want := Want{Repo: "octo-org/hello-world", Issue: 12}
	for _, tc := range []struct {
		name  string
		key   []byte
		check func(t *testing.T, s *state.State)
	}{
		{"jira-signed", key, func(t *testing.T, s *state.State) {
			if s.TrackerEnabled == nil || *s.TrackerEnabled || s.TrackerNote != "paused: 401" || !s.PendingAuthCheck ||
				s.TrackerRetryAt.IsZero() {
				t.Errorf("tracker fields = %v %q %v %v", s.TrackerEnabled, s.TrackerNote, s.PendingAuthCheck, s.TrackerRetryAt)
			}
			if tk := s.Tasks[0]; tk.Sync != state.SyncCreated || tk.Key != "PROJ-1" || tk.URL != "https://example.atlassian.net/browse/PROJ-1" {
				t.Errorf("task 01 = %+v", tk)
			}
			if tk := s.Tasks[2]; tk.Sync != state.SyncFailed || tk.Error == "" {
				t.Errorf("task 03 = %+v", tk)
			}
			if s.TrackerInUse != state.TrackerJira {
				t.Errorf("tracker in use %q, want jira (a task has a Jira key)", s.TrackerInUse)
			}
		}},
		{"subissues", nil, func(t *testing.T, s *state.State) {
			if s.Tracker != "github" || s.TrackerInUse != state.TrackerGitHub || s.TrackerEnabled == nil || !*s.TrackerEnabled || s.Tasks[0].Key != "#31" {
				t.Errorf("tracker %q enabled %v, task 01 %+v", s.Tracker, s.TrackerEnabled, s.Tasks[0])
			}
		}},
		{"local", nil, func(t *testing.T, s *state.State) {
			if s.TrackerOff != state.TrackerNotConfigured || s.TrackerInUse != state.TrackerLocal || s.Tasks[3].Sync != state.SyncLocal {
				t.Errorf("tracker_off %q, task 04 %+v", s.TrackerOff, s.Tasks[3])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want
			w.Key = tc.key
			s, err := Parse(readV1(t, tc.name), w)
			if err != nil {
				t.Fatalf("Parse schema 1: %v", err)
			}
			if s.Schema != state.SchemaVersion {
				t.Errorf("schema = %d, want %d", s.Schema, state.SchemaVersion)
			}
			tc.check(t, s)
			before := *s
			body := mustRender(t, s, tc.key)
			transcript.Golden(t, filepath.Join("testdata", "v1", tc.name+".v2.golden"), body, *update)
			if strings.Contains(body, `"jira_key"`) {
				t.Error("re-rendered block still names jira_key")
			}
			got, err := Parse(body, w)
			if err != nil {
				t.Fatalf("Parse re-rendered: %v", err)
			}
			before.Sig, got.Sig = "", ""
			if !reflect.DeepEqual(&before, got) {
				t.Errorf("re-rendered state differs:\nbefore %+v\nafter  %+v", before, *got)
			}
		})
	}
}

// TestParseRefusesForgedSchema1: a schema-1 comment is held to its
// schema-1 signature, and a schema-1 block holding a schema-2 member is
// not something Render ever wrote.
func TestParseRefusesForgedSchema1(t *testing.T) {
	want := Want{Repo: "octo-org/hello-world", Issue: 12, Key: key}
	if _, err := Parse(readV1(t, "jira-signed"), Want{Repo: want.Repo, Issue: 12, Key: []byte("other-key")}); !errors.Is(err, ErrForged) {
		t.Errorf("other key: err = %v, want ErrForged", err)
	}
	signed := readV1(t, "jira-signed")
	forged := mutate(t, signed, func(s, _ map[string]any) { s["jira_note"] = "fine" })
	if _, err := Parse(forged, want); !errors.Is(err, ErrForged) {
		t.Errorf("edited jira_note: err = %v, want ErrForged", err)
	}
	mixed := mutate(t, signed, func(s, _ map[string]any) { s["tracker_note"] = "x" })
	if _, err := Parse(mixed, want); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "tracker_note") {
		t.Errorf("schema-2 member in schema 1: err = %v, want ErrCorrupt naming tracker_note", err)
	}
	mixedTask := mutate(t, signed, func(s, _ map[string]any) { s["tasks"].([]any)[0].(map[string]any)["key"] = "PROJ-9" })
	if _, err := Parse(mixedTask, want); !errors.Is(err, ErrCorrupt) {
		t.Errorf("schema-2 task member in schema 1: err = %v, want ErrCorrupt", err)
	}
}
