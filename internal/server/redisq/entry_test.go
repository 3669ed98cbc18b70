package redisq

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// GitHub's limits on what a delivery carries: a body (issue, pull
// request, comment, review) of 65,536 characters, a title of 1,024, a
// label name of 50, 100 labels on an issue. docs/app.md's sizing of a
// queue entry rests on them (the intake refuses longer bodies and titles).
const (
	maxText   = 65536
	maxTitle  = 1024
	maxLabel  = 50
	maxLabels = 100
)

// Documented sizes of a queue entry (docs/app.md §4): typical deliveries
// (the vendored examples) and the worst case GitHub can send.
const (
	docTypicalEntry = 3 << 10
	docWorstEntry   = 300_000
)

// worstChars are the characters costing the most bytes in an entry: a
// 4-byte UTF-8 one, and ones JSON escapes to six bytes.
var worstChars = []string{"😀", "<", "\u2028", "é", "a"}

// worstDelivery is the vendored example file with its texts at GitHub's
// limits, written with ch.
func worstDelivery(t *testing.T, file, ch string) *ghevent.Event {
	t.Helper()
	labels := make([]string, maxLabels)
	for i := range labels {
		labels[i] = fmt.Sprintf("%02d", i) + strings.Repeat(ch, maxLabel-2)
	}
	text := strings.Repeat(ch, maxText)
	set := map[string]any{}
	switch ghtest.EventName(file) {
	case "issue_comment":
		set = map[string]any{"comment.body": text, "issue.body": text, "issue.title": strings.Repeat(ch, maxTitle), "issue.labels": ghtest.Labels(labels...)}
	case "issues":
		set = map[string]any{"issue.body": text, "issue.title": strings.Repeat(ch, maxTitle), "issue.labels": ghtest.Labels(labels...)}
	case "pull_request":
		set = map[string]any{"pull_request.body": text, "pull_request.title": strings.Repeat(ch, maxTitle), "pull_request.labels": ghtest.Labels(labels...)}
	case "pull_request_review":
		set = map[string]any{"review.body": text, "pull_request.body": text, "pull_request.title": strings.Repeat(ch, maxTitle), "pull_request.labels": ghtest.Labels(labels...)}
	}
	name := ghtest.EventName(file)
	ev, err := ghevent.Decode(name, ghtest.Mutate(t, ghtest.Payload(t, file), set))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// formatOneBytes is the size of the entry the format-1 queue wrote for j:
// the whole decoded event as JSON.
func formatOneBytes(t *testing.T, j job.Job) int {
	b, err := json.Marshal(j.Event)
	if err != nil {
		t.Fatal(err)
	}
	return len("v1d"+j.Delivery+"e"+j.Event.Name+"t"+fmt.Sprint(j.Received.UnixMilli())+"j") + len(b)
}

// TestQueueEntrySizeIsWhatTheDocsSay measures the bytes of a queue entry
// for every vendored example (docs: 1–3 KB) and for the worst case GitHub
// can send (every text and label at its limit, in the costliest
// characters), and holds them to docs/app.md's figures.
func TestQueueEntrySizeIsWhatTheDocsSay(t *testing.T) {
	now := time.UnixMilli(1_790_000_000_000)
	typical := 0
	for _, f := range ghtest.Files(t) {
		name := ghtest.EventName(f)
		ev, err := ghevent.Decode(name, ghtest.Payload(t, f))
		if err != nil || !ev.Handled {
			continue
		}
		n, err := EntryBytes(job.Job{Delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Event: ev, Received: now}, 123456)
		if err != nil {
			t.Fatal(err)
		}
		typical = max(typical, n)
		if n > docTypicalEntry {
			t.Errorf("%s: entry of %d bytes, over the documented %d", f, n, docTypicalEntry)
		}
	}
	worst, worstOld, worstWhat := 0, 0, ""
	for _, f := range []string{"issue_comment.created.json", "issue_comment.edited.json", "issues.labeled.json",
		"pull_request.opened.json", "pull_request.edited.json", "pull_request_review.submitted.json"} {
		for _, ch := range worstChars {
			j := job.Job{Delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Event: worstDelivery(t, f, ch), Received: now}
			n, err := EntryBytes(j, 123456)
			if err != nil {
				t.Fatal(err)
			}
			if n > worst {
				worst, worstWhat = n, fmt.Sprintf("%s in %q", f, ch)
			}
			worstOld = max(worstOld, formatOneBytes(t, j))
		}
	}
	t.Logf("queue entry: typical at most %d bytes; worst case %d bytes (%s); the format-1 entry (whole event as JSON) of the same deliveries: up to %d bytes",
		typical, worst, worstWhat, worstOld)
	if worst > docWorstEntry {
		t.Errorf("worst-case entry of %d bytes (%s), over the documented %d", worst, worstWhat, docWorstEntry)
	}
}

// TestJobViewKeepsWhatTheJobReads: an entry keeps the texts its job reads
// (the issue's title and body for a start, the PR's description as
// delivered, a comment's and a review's body) and drops the others.
func TestJobViewKeepsWhatTheJobReads(t *testing.T) {
	for _, tt := range []struct {
		file            string
		title, body     bool
		comment, review bool
	}{
		{"issues.labeled.json", true, true, false, false},
		{"issues.closed.json", false, false, false, false},
		{"issue_comment.created.json", false, false, true, false},
		{"pull_request.opened.json", false, true, false, false},
		{"pull_request.edited.json", false, true, false, false},
		{"pull_request.synchronize.json", false, false, false, false},
		{"pull_request_review.submitted.json", false, false, false, true},
	} {
		ev := worstDelivery(t, tt.file, "x")
		v := JobView(ev)
		if (v.Title != "") != tt.title || (v.Body != "") != tt.body {
			t.Errorf("%s: title kept %v, body kept %v; want %v, %v", tt.file, v.Title != "", v.Body != "", tt.title, tt.body)
		}
		if tt.comment && v.Comment.Body != ev.Comment.Body || tt.review && v.Review.Body != ev.Review.Body {
			t.Errorf("%s: the comment's or review's body was dropped", tt.file)
		}
		if v.Pull != nil && (v.Pull.Body != "" || v.Pull.URL != ev.Pull.URL || v.Pull.Author != ev.Pull.Author) {
			t.Errorf("%s: the PR's copy: body %d bytes, URL %q, author %v", tt.file, len(v.Pull.Body), v.Pull.URL, v.Pull.Author)
		}
	}
}

// FuzzDecodeEntry: whatever a stream entry holds, decoding it never
// panics, and an entry written by entryFields reads back as the job's
// JobView.
func FuzzDecodeEntry(f *testing.F) {
	f.Add("2", "123", "d-1", "issue_comment", `{"Name":"issue_comment","Comment":{"id":5}}`, "body", "", "1790000000000")
	f.Add("1", "", "d-2", "issues", `{"Name":"issues","Title":"t"}`, "", "", "x")
	f.Add("2", "x", "", "", "{", "", "r", "")
	f.Fuzz(func(t *testing.T, v, app, delivery, event, js, comment, review, received string) {
		vals := map[string]any{fieldVersion: v, fieldApp: app, fieldDelivery: delivery, fieldEvent: event,
			fieldJSON: js, fieldComment: comment, fieldReview: []byte(review), fieldReceived: received}
		e := decodeEntry("1-0", vals)
		if e.Bad == nil && (e.Job.Event == nil || e.Job.Delivery == "") {
			t.Fatalf("decoded without an event or a delivery: %+v", e)
		}
		for _, name := range []string{"issue_comment", "issues"} {
			ev := &ghevent.Event{Name: name, Action: "labeled", Repo: "o/r", Title: app, Body: js, Handled: true,
				Comment: &forge.Comment{ID: 7, Body: comment}, Review: &forge.Review{ID: 8, Body: review}}
			j := job.Job{Delivery: "d-" + delivery, Event: ev, Received: time.UnixMilli(1_790_000_000_000)}
			fs, err := entryFields(j, 42)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			for i := 0; i+1 < len(fs); i += 2 {
				switch v := fs[i+1].(type) {
				case []byte:
					m[fs[i].(string)] = string(v)
				default:
					m[fs[i].(string)] = fmt.Sprint(v)
				}
			}
			back := decodeEntry("2-0", m)
			if back.Bad != nil || back.AppID != 42 || !reflect.DeepEqual(back.Job.Event, JobView(ev)) || back.Job.Delivery != j.Delivery {
				t.Fatalf("round trip of %s: %+v (bad %v), want %+v", name, back.Job.Event, back.Bad, JobView(ev))
			}
		}
	})
}

// TestEntryCarriesTheTraceContext: a job's traceparent comes back from its
// entry, so the replica that claims it continues the delivery's trace; a
// job without one (traces off) adds no field.
func TestEntryCarriesTheTraceContext(t *testing.T) {
	ev, err := ghevent.Decode("issues", ghtest.Payload(t, "issues.labeled.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ""} {
		j := job.Job{Delivery: "d-1", Event: ev, Received: time.UnixMilli(1700000000000), Trace: tp}
		fs, err := entryFields(j, 7)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{}
		for i := 0; i+1 < len(fs); i += 2 {
			vals[fs[i].(string)] = fs[i+1]
		}
		if _, has := vals[fieldTrace]; has != (tp != "") {
			t.Errorf("trace %q: entry has the trace field: %v", tp, has)
		}
		for k, v := range vals { // as Redis hands them back
			vals[k] = fmt.Sprint(v)
			if b, ok := v.([]byte); ok {
				vals[k] = string(b)
			}
		}
		if e := decodeEntry("1-0", vals); e.Bad != nil || e.Job.Trace != tp {
			t.Errorf("trace %q came back as %q (%v)", tp, e.Job.Trace, e.Bad)
		}
	}
}

// FuzzPeekEntry: whatever a stream entry holds, peeking at it never
// panics; a peeked entry decodes to what decodeEntry reads, and the
// installation it was peeked (and parked) under is the decoded event's: an
// entry whose installation field disagrees with its event does not decode
// (no replica writes one: entryFields takes both from the same event).
func FuzzPeekEntry(f *testing.F) {
	f.Add("2", "123", "7", "d-1", "issues", `{"Name":"issues","Installation":7}`)
	f.Add("2", "123", "x", "d-1", "issues", `{"Name":"issues"}`)
	f.Add("1", "", "", "d-2", "issues", `{"Name":"issues","Title":"t"}`)
	f.Add("2", "x", "1", "", "", "{")
	f.Add("2", "123", "8", "d-1", "issues", `{"Name":"issues","Installation":7}`)
	f.Fuzz(func(t *testing.T, v, app, inst, delivery, event, js string) {
		vals := map[string]any{fieldVersion: v, fieldApp: app, fieldInst: inst, fieldDelivery: delivery,
			fieldEvent: event, fieldJSON: js}
		e := peekEntry("1-0", vals)
		peekedInst := e.installation()
		undecoded := e.vals != nil
		e.decode()
		want := decodeEntry("1-0", vals)
		if (e.Bad == nil) != (want.Bad == nil) || !reflect.DeepEqual(e.Job, want.Job) || e.AppID != want.AppID {
			t.Fatalf("peeked then decoded: %+v (bad %v); decoded: %+v (bad %v)", e.Job, e.Bad, want.Job, want.Bad)
		}
		if undecoded && want.Bad == nil && want.Job.Event.Installation != peekedInst {
			t.Fatalf("installation %d peeked, %d decoded", peekedInst, want.Job.Event.Installation)
		}
	})
}

// TestPeekedEntryOfEntryFieldsKnowsItsInstallation: an entry written by
// entryFields is parked from its installation field, without decoding.
func TestPeekedEntryOfEntryFieldsKnowsItsInstallation(t *testing.T) {
	ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: 3, Installation: 99}
	fs, err := entryFields(job.Job{Delivery: "d-1", Event: ev, Received: time.UnixMilli(1_790_000_000_000)}, 42)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	for i := 0; i+1 < len(fs); i += 2 { // as Redis hands them back
		vals[fs[i].(string)] = fmt.Sprint(fs[i+1])
		if b, ok := fs[i+1].([]byte); ok {
			vals[fs[i].(string)] = string(b)
		}
	}
	e := peekEntry("1-0", vals)
	if e.vals == nil || e.installation() != 99 || e.AppID != 42 {
		t.Fatalf("peeked entry: undecoded %v, installation %d, App %d; want undecoded, 99, 42", e.vals != nil, e.installation(), e.AppID)
	}
	if e.decode(); e.Bad != nil || e.Job.Event.Installation != 99 || e.Job.Delivery != "d-1" {
		t.Fatalf("decoded: %+v (%v)", e.Job, e.Bad)
	}
}
