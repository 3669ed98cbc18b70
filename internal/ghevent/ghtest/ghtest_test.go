package ghtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// only the goroutine it runs on, so helper failures can be asserted.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// fails runs fn with a recorder and returns the Fatalf message, "" if none.
func fails(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msg
}

// get reads a dotted path from a JSON payload.
func get(t *testing.T, payload []byte, path string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var node any
	if err := dec.Decode(&node); err != nil {
		t.Fatalf("decode: %v", err)
	}
	for _, seg := range strings.Split(path, ".") {
		switch n := node.(type) {
		case map[string]any:
			node = n[seg]
		case []any:
			var i int
			fmt.Sscan(seg, &i)
			node = n[i]
		default:
			t.Fatalf("path %s: %q inside %T", path, seg, node)
		}
	}
	return node
}

func has(t *testing.T, payload []byte, path string) bool {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(payload, &root); err != nil {
		t.Fatalf("decode: %v", err)
	}
	segs := strings.Split(path, ".")
	node := root
	for _, seg := range segs[:len(segs)-1] {
		next, ok := node[seg].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	_, ok := node[segs[len(segs)-1]]
	return ok
}

func TestPayloadFindsVendoredFileFromPackageDirectory(t *testing.T) {
	p := ghtest.Payload(t, "issue_comment.created.json")
	if !json.Valid(p) || !bytes.Contains(p, []byte(`"action": "created"`)) {
		t.Fatalf("Payload returned %d bytes that are not the issue_comment.created example", len(p))
	}
	if got := filepath.Base(ghtest.Dir(t)); got != "webhooks" {
		t.Errorf("Dir = %s, want .../testdata/webhooks", ghtest.Dir(t))
	}
}

func TestPayloadFailsOnMissingOrOutsideFile(t *testing.T) {
	for _, file := range []string{"no-such-event.json", "../webhooks/ping.json", "/etc/passwd"} {
		msg := fails(t, func(tb testing.TB) { ghtest.Payload(tb, file) })
		if msg == "" {
			t.Errorf("Payload(%q) did not fail the test", file)
		}
	}
}

func TestFilesListsEveryPayload(t *testing.T) {
	files := ghtest.Files(t)
	want := []string{"issues.labeled.json", "issue_comment.created.pr.json", "workflow_run.completed.json", "ping.json"}
	for _, w := range want {
		found := false
		for _, f := range files {
			found = found || f == w
		}
		if !found {
			t.Errorf("Files() = %v, missing %s", files, w)
		}
	}
}

func TestEventName(t *testing.T) {
	tests := map[string]string{
		"issue_comment.created.pr.json":                        "issue_comment",
		"pull_request_review.submitted.changes_requested.json": "pull_request_review",
		"workflow_dispatch.json":                               "workflow_dispatch",
		"/x/y/schedule.minimal.json":                           "schedule",
	}
	for file, want := range tests {
		if got := ghtest.EventName(file); got != want {
			t.Errorf("EventName(%q) = %q, want %q", file, got, want)
		}
	}
}

func TestMutateSetsPaths(t *testing.T) {
	orig := ghtest.Payload(t, "issue_comment.created.json")
	keep := bytes.Clone(orig)
	p := ghtest.Mutate(t, orig, map[string]any{
		"issue.number":                  7,
		"comment.body":                  "B",
		"sender.login":                  "octocat",
		"issue.labels.0.name":           "autopilot",
		"installation.id":               int64(9007199254740993), // above 2^53: must stay exact
		"comment.reactions":             ghtest.Delete,
		"issue.active_lock_reason.note": "created through null",
		"new.nested.member":             true,
	})
	if !bytes.Equal(orig, keep) {
		t.Fatalf("Mutate changed its input")
	}
	checks := map[string]any{
		"issue.number":                  json.Number("7"),
		"comment.body":                  "B",
		"sender.login":                  "octocat",
		"issue.labels.0.name":           "autopilot",
		"installation.id":               json.Number("9007199254740993"),
		"new.nested.member":             true,
		"issue.active_lock_reason.note": "created through null",
		"comment.id":                    json.Number("492700400"), // untouched sibling
	}
	for path, want := range checks {
		if got := get(t, p, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	if has(t, p, "comment.reactions") {
		t.Errorf("comment.reactions still present after Delete")
	}
}

func TestMutateDeletesArrayElement(t *testing.T) {
	p := ghtest.Mutate(t, ghtest.Payload(t, "issues.labeled.json"), map[string]any{"issue.labels.0": ghtest.Delete})
	labels, ok := get(t, p, "issue.labels").([]any)
	if !ok || len(labels) != 1 || get(t, p, "issue.labels.0.name") != "autopilot" {
		t.Fatalf("issue.labels after deleting [0] = %v, want only autopilot", labels)
	}
}

func TestMutateReplacesParentBeforeChildren(t *testing.T) {
	p := ghtest.Mutate(t, ghtest.Payload(t, "issues.labeled.json"), map[string]any{
		"issue.labels":        ghtest.Labels("autopilot", "bug"),
		"issue.labels.1.name": "autopilot/step:plan",
	})
	if got := get(t, p, "issue.labels.1.name"); got != "autopilot/step:plan" {
		t.Errorf("issue.labels.1.name = %v, want the child set after the parent", got)
	}
}

func TestMutateFailsOnBadPaths(t *testing.T) {
	p := ghtest.Payload(t, "issues.labeled.json")
	tests := map[string]map[string]any{
		"through a string":     {"action.x": 1},
		"through a number":     {"issue.number.x": 1},
		"index out of range":   {"issue.labels.5.name": "x"},
		"non-numeric index":    {"issue.labels.first.name": "x"},
		"empty segment":        {"issue..number": 1},
		"unencodable value":    {"issue.title": func() {}},
		"delete out of range":  {"issue.labels.9": ghtest.Delete},
		"payload is not JSON!": nil,
	}
	for name, set := range tests {
		t.Run(name, func(t *testing.T) {
			payload := p
			if set == nil {
				payload = []byte("{")
			}
			if msg := fails(t, func(tb testing.TB) { ghtest.Mutate(tb, payload, set) }); msg == "" {
				t.Errorf("Mutate(%v) did not fail the test", set)
			}
		})
	}
}

func TestWithRepoMovesThePayload(t *testing.T) {
	p := ghtest.WithRepo(t, ghtest.Payload(t, "issue_comment.created.json"), "autopilot-dev/sandbox")
	for path, want := range map[string]string{
		"repository.full_name":   "autopilot-dev/sandbox",
		"repository.name":        "sandbox",
		"repository.owner.login": "autopilot-dev",
	} {
		if got := get(t, p, path); got != want {
			t.Errorf("%s = %v, want %s", path, got, want)
		}
	}
	ev, err := ghevent.Decode("issue_comment", p)
	if err != nil || ev.Repo != "autopilot-dev/sandbox" {
		t.Fatalf("Decode = %+v, %v; want Repo autopilot-dev/sandbox", ev, err)
	}
	if msg := fails(t, func(tb testing.TB) { ghtest.WithRepo(tb, p, "no-slash") }); msg == "" {
		t.Errorf("WithRepo(no-slash) did not fail the test")
	}
}

func TestScenarioBuiltFromRealPayloadDecodes(t *testing.T) {
	// The way other packages build deliveries: a real payload, varied.
	p := ghtest.Mutate(t, ghtest.Payload(t, "issue_comment.created.pr.json"), map[string]any{
		"issue.number": 14,
		"issue.body":   "Implements the plan.\n\nAutopilot-Issue: #9",
		"issue.labels": ghtest.Labels("autopilot", "autopilot/step:plan"),
		"comment.body": "B",
		"sender.login": "maintainer",
	})
	ev, err := ghevent.Decode("issue_comment", p)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if ev.Issue != 14 || !ev.IsPR || ev.Comment.Body != "B" || ev.Comment.IssueNumber != 14 || ev.Sender.Login != "maintainer" {
		t.Errorf("decoded %+v with comment %+v, want PR 14 comment B by maintainer", ev, ev.Comment)
	}
	if !reflect.DeepEqual(ev.Labels, []string{"autopilot", "autopilot/step:plan"}) || !reflect.DeepEqual(ev.LinkedIssues, []int{9}) {
		t.Errorf("Labels %v LinkedIssues %v, want the mutated labels and issue 9", ev.Labels, ev.LinkedIssues)
	}
}
