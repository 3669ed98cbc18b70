package redisq

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// A queue entry holds what the job reads of a delivery, not its payload:
// the decoded event (kind, action, repository, installation, sender, issue
// number, labels, linked issues, the comment, review or run it carries),
// stamped with the App id, and at most the one text the job reads:
//
//   - the issue's title and body only for issues.labeled (a run's start
//     reads them) and the PR's body only for pull_request opened and
//     edited (the PR's description as its author delivered it); every
//     other event's copy of the issue or PR text is dropped;
//   - the comment's body (issue_comment), the review's body
//     (pull_request_review).
//
// Texts go in fields of their own, as the bytes GitHub sent (a stream
// field is binary-safe), not escaped inside the JSON, so an entry is the
// routing fields (about 1 KB) plus at most one text: under 257 KiB for
// the longest text GitHub accepts (65,536 characters of 4-byte UTF-8;
// intake refuses longer ones). With traces on, the delivery's W3C
// traceparent (55 bytes) goes in a field of its own too; a replica that
// does not know the field ignores it. The event's installation goes in a
// field of its own as well ("i"), so a replica parks an entry (see
// InstallationAhead) without decoding its event; an entry without it
// (queued before) is decoded when read. Format "1" (the whole decoded event as
// JSON, no App id) is still read, so entries queued before an upgrade run.

// Entry fields.
const (
	fieldVersion  = "v"
	fieldApp      = "a"
	fieldInst     = "i" // the event's installation, read without decoding the event
	fieldDelivery = "d"
	fieldEvent    = "e"
	fieldJSON     = "j"
	fieldReceived = "t"
	fieldTitle    = "tt"
	fieldBody     = "tb"
	fieldComment  = "tc"
	fieldReview   = "tr"
	fieldTrace    = "tp" // the job's traceparent, when traces are on
	entryVersion  = "2"
	entryV1       = "1"
)

// keepsIssueText reports the events whose job reads the issue's (or PR's)
// title and body from the payload.
func keepsIssueText(ev *ghevent.Event) (title, body bool) {
	switch {
	case ev.Name == "issues" && ev.Action == "labeled":
		return true, true
	case ev.Name == "pull_request" && (ev.Action == "opened" || ev.Action == "edited"):
		return false, true
	}
	return false, false
}

// JobView is the copy of ev a queue entry carries: ev without the texts
// its job does not read (see the top of this file).
func JobView(ev *ghevent.Event) *ghevent.Event {
	v := *ev
	keepTitle, keepBody := keepsIssueText(ev)
	if !keepTitle {
		v.Title = ""
	}
	if !keepBody {
		v.Body = ""
	}
	if v.Pull != nil {
		p := *v.Pull // the job reads its author and URL
		p.Title, p.Body = "", ""
		v.Pull = &p
	}
	return &v
}

// entryFields are the fields of the entry of j, for App appID, as XADD
// arguments (field, value, ...).
func entryFields(j job.Job, appID int64) ([]any, error) {
	ev := JobView(j.Event)
	out := []any{fieldVersion, entryVersion, fieldApp, appID, fieldInst, ev.Installation, fieldDelivery, j.Delivery,
		fieldEvent, ev.Name, fieldReceived, j.Received.UnixMilli()}
	text := func(field, s string) {
		if s != "" {
			out = append(out, field, s)
		}
	}
	text(fieldTrace, j.Trace)
	text(fieldTitle, ev.Title)
	text(fieldBody, ev.Body)
	ev.Title, ev.Body = "", ""
	if ev.Comment != nil {
		c := *ev.Comment
		text(fieldComment, c.Body)
		c.Body = ""
		ev.Comment = &c
	}
	if ev.Review != nil {
		r := *ev.Review
		text(fieldReview, r.Body)
		r.Body = ""
		ev.Review = &r
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("queue entry for %s: %w", j.Delivery, err)
	}
	return append(out, fieldJSON, b), nil
}

// EntryBytes is the size of the entry of j in the stream: its field names
// and values (what Redis stores, before its own per-entry overhead).
func EntryBytes(j job.Job, appID int64) (int, error) {
	fs, err := entryFields(j, appID)
	if err != nil {
		return 0, err
	}
	return fieldsSize(fs), nil
}

// fieldsSize is the bytes of an entry's field names and values.
func fieldsSize(fs []any) int {
	n := 0
	for _, f := range fs {
		switch v := f.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		case int64:
			var b [20]byte
			n += len(strconv.AppendInt(b[:0], v, 10))
		default:
			n += len(fmt.Sprint(v))
		}
	}
	return n
}

// peekEntry reads what the reader needs to hold or park an entry — its
// format, App and installation — and leaves the event to decode (see
// Entry.decode) when the entry carries its installation in a field of its
// own; an entry without it (queued by an older replica) is decoded at once.
func peekEntry(id string, vals map[string]any) Entry {
	inst, ok := vals[fieldInst].(string)
	if !ok || vals[fieldVersion] != entryVersion {
		return decodeEntry(id, vals)
	}
	e := Entry{ID: id}
	app, err := strconv.ParseInt(str(vals, fieldApp), 10, 64)
	if err != nil {
		e.Bad = fmt.Errorf("queue entry %s: App id %q: %v", id, str(vals, fieldApp), err)
		return e
	}
	i, err := strconv.ParseInt(inst, 10, 64)
	if err != nil {
		return decodeEntry(id, vals)
	}
	e.AppID, e.inst, e.vals = app, i, vals
	return e
}

// decode decodes an entry peekEntry left undecoded.
func (e *Entry) decode() {
	if e.vals == nil {
		return
	}
	d := decodeEntry(e.ID, e.vals)
	d.Deliveries = e.Deliveries
	*e = d
}

// installation is the entry's installation (0 for none).
func (e *Entry) installation() int64 {
	if e.vals != nil {
		return e.inst
	}
	if e.Job.Event != nil {
		return e.Job.Event.Installation
	}
	return 0
}

// str is field k of an entry as a string ("" when missing).
func str(vals map[string]any, k string) string {
	switch v := vals[k].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// entryDecodes counts the events decoded from entries (tests).
var entryDecodes atomic.Int64

// decodeEntry turns an entry's fields back into its job.
func decodeEntry(id string, vals map[string]any) Entry {
	str := func(k string) string { return str(vals, k) }
	e := Entry{ID: id}
	v := str(fieldVersion)
	if v != entryVersion && v != entryV1 {
		e.Bad = fmt.Errorf("queue entry %s: format %q, this replica reads %q and %q", id, v, entryV1, entryVersion)
		return e
	}
	if v == entryVersion {
		app, err := strconv.ParseInt(str(fieldApp), 10, 64)
		if err != nil {
			e.Bad = fmt.Errorf("queue entry %s: App id %q: %v", id, str(fieldApp), err)
			return e
		}
		e.AppID = app
	}
	e.Job.Delivery = str(fieldDelivery)
	e.Job.Trace = str(fieldTrace)
	var ev ghevent.Event
	entryDecodes.Add(1)
	if err := json.Unmarshal([]byte(str(fieldJSON)), &ev); err != nil || e.Job.Delivery == "" || ev.Name != str(fieldEvent) {
		e.Bad = fmt.Errorf("queue entry %s (delivery %q): malformed event: %v", id, e.Job.Delivery, err)
		return e
	}
	if i, err := strconv.ParseInt(str(fieldInst), 10, 64); err == nil && i != ev.Installation {
		// No replica writes this (entryFields takes both from one event),
		// and the replica counts the entry under the field's installation
		// but ends its job under the event's: it is not run.
		e.Bad = fmt.Errorf("queue entry %s (delivery %q): installation field %d, event's installation %d", id, e.Job.Delivery, i, ev.Installation)
		return e
	}
	if v == entryVersion {
		ev.Title, ev.Body = str(fieldTitle), str(fieldBody)
		if ev.Comment != nil {
			ev.Comment.Body = str(fieldComment)
		}
		if ev.Review != nil {
			ev.Review.Body = str(fieldReview)
		}
	}
	e.Job.Event = &ev
	if ms, err := strconv.ParseInt(str(fieldReceived), 10, 64); err == nil {
		e.Job.Received = time.UnixMilli(ms)
	}
	return e
}
