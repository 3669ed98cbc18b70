package ghevent

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// Values as they appear in the vendored payloads (testdata/webhooks).
const (
	helloWorld = "Codertocat/Hello-World"
	octoRepo   = "octo-org/octo-repo"
	issueTitle = "Spelling error in the README file"
	issueBody  = "It looks like you accidently spelled 'commit' with two 't's."
	prTitle    = "Update the README with new information."
	prBody     = "This is a pretty simple change that we need to pull into master.\n\nFixes #1"
	prURL      = "https://github.com/Codertocat/Hello-World/pull/2"
	prHead     = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
)

var (
	codertocat = forge.User{Login: "Codertocat", ID: 21031067, Type: "User"}
	octocat    = forge.User{Login: "octocat", ID: 25328754, Type: "User"}
	linterBot  = forge.User{Login: "octocoders-linter[bot]", ID: 49795351, Type: "Bot"}
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func issueEvent(action string, handled bool, installation int64) Event {
	return Event{
		Name: "issues", Action: action, Repo: helloWorld, Installation: installation,
		Sender: codertocat, Handled: handled, Issue: 1, Labels: []string{"bug"},
		Title: issueTitle, Body: issueBody, IssueState: "open",
	}
}

func commentEvent(action string, handled bool) Event {
	ev := issueEvent(action, handled, 0)
	ev.Name = "issue_comment"
	ev.Comment = &forge.Comment{
		ID: 492700400, IssueNumber: 1, Author: codertocat,
		Body:      "You are totally right! I'll get this fixed today.",
		CreatedAt: ts("2019-05-15T15:20:21Z"), UpdatedAt: ts("2019-05-15T15:20:22Z"),
		URL: "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400",
	}
	return ev
}

func pullEvent(action string, handled bool, body string) Event {
	linked := LinkedIssues(body)
	return Event{
		Name: "pull_request", Action: action, Repo: helloWorld, Installation: 1,
		Sender: codertocat, Handled: handled, Issue: 2, IsPR: true, Labels: []string{"bug"},
		Title: prTitle, Body: body, IssueState: "open",
		Pull: &forge.Pull{
			Number: 2, Title: prTitle, Body: body, State: "open",
			Author: codertocat, HeadSHA: prHead, URL: prURL, HeadRepo: "Codertocat/Hello-World",
		},
		LinkedIssues: linked,
	}
}

func reviewEvent(action, state, body string, handled bool) Event {
	ev := pullEvent(action, handled, prBody)
	ev.Name = "pull_request_review"
	ev.Review = &forge.Review{
		ID: 237895671, PR: 2, Reviewer: codertocat, State: state, Body: body,
		SubmittedAt: ts("2019-05-15T15:20:38Z"),
		URL:         prURL + "#pullrequestreview-237895671",
		CommitSHA:   prHead,
	}
	return ev
}

func runEvent(action, status, conclusion string, handled bool) Event {
	return Event{
		Name: "workflow_run", Action: action, Repo: octoRepo,
		Sender:  forge.User{Login: "Codertocat", ID: 15669918, Type: "User"},
		Handled: handled,
		WorkflowRun: &forge.WorkflowRun{
			ID: 289782451, Name: "test", // from the workflow object: the run's own name is empty
			DisplayTitle: "ci(action): update actions/setup-node digest to 8c91899",
			Status:       status, Conclusion: conclusion, Event: "repository_dispatch",
			HeadSHA:   "3484a3fb816e0859fd6e1cea078d76385ff50625",
			Path:      ".github/workflows/test.yml",
			URL:       "https://github.com/octo-org/octo-repo/actions/runs/289782451",
			CreatedAt: ts("2020-10-05T16:33:24Z"),
			HeadRepo:  "octo-org/octo-repo",
		},
	}
}

func TestDecodeVendoredPayloads(t *testing.T) {
	tests := map[string]func() Event{
		"issues.labeled.json": func() Event {
			ev := issueEvent("labeled", true, 0)
			ev.Labels = []string{"bug", "autopilot"}
			ev.Label = "autopilot"
			return ev
		},
		"issues.unlabeled.json": func() Event {
			ev := issueEvent("unlabeled", true, 0)
			ev.Label = "autopilot"
			return ev
		},
		"issues.opened.json": func() Event { return issueEvent("opened", false, 0) },
		"issues.closed.json": func() Event {
			ev := issueEvent("closed", true, 1)
			ev.Body, ev.IssueState = "", "closed"
			return ev
		},
		"issues.reopened.json": func() Event {
			ev := issueEvent("reopened", true, 1)
			ev.Body = ""
			return ev
		},
		"issue_comment.created.json": func() Event {
			ev := commentEvent("created", true)
			ev.Installation = 1
			ev.Comment.Body = "You are totally right! I'll get this fixed right away."
			ev.Comment.UpdatedAt = ev.Comment.CreatedAt
			return ev
		},
		"issue_comment.created.pr.json": func() Event {
			ev := commentEvent("created", true)
			ev.Installation = 1
			ev.Issue, ev.IsPR, ev.Title, ev.Body = 2, true, prTitle, prBody
			ev.LinkedIssues = []int{1}
			ev.Comment.IssueNumber = 2
			ev.Comment.Body = "A"
			ev.Comment.UpdatedAt = ev.Comment.CreatedAt
			ev.Comment.URL = prURL + "#issuecomment-492700400"
			return ev
		},
		"issue_comment.created.bot.json": func() Event {
			ev := commentEvent("created", true)
			ev.Installation = 1
			ev.Sender = linterBot
			ev.Comment.Author = linterBot
			ev.Comment.AppID = 15368
			ev.Comment.Body = "<!-- autopilot:state -->\n## Autopilot State"
			ev.Comment.UpdatedAt = ev.Comment.CreatedAt
			return ev
		},
		"issue_comment.edited.json":  func() Event { return commentEvent("edited", true) },
		"issue_comment.deleted.json": func() Event { return commentEvent("deleted", false) },
		"pull_request.opened.json":   func() Event { return pullEvent("opened", true, prBody) },
		"pull_request.edited.json": func() Event {
			ev := pullEvent("edited", true, prBody)
			ev.BodyEdited = true // the example edits the description (changes.body)
			return ev
		},
		"pull_request.closed.json": func() Event {
			ev := pullEvent("closed", true, prBody)
			ev.IssueState, ev.Pull.State = "closed", "closed"
			return ev
		},
		"pull_request.closed.merged.json": func() Event {
			ev := pullEvent("closed", true, prBody)
			ev.IssueState, ev.Pull.State, ev.Pull.Merged = "closed", "closed", true
			return ev
		},
		"pull_request.reopened.json": func() Event {
			return pullEvent("reopened", true, "This is a pretty simple change that we need to pull into master.")
		},
		"pull_request.synchronize.json": func() Event {
			return pullEvent("synchronize", true, "This is a pretty simple change that we need to pull into master.")
		},
		"pull_request.labeled.json": func() Event {
			return pullEvent("labeled", false, "This is a pretty simple change that we need to pull into master.")
		},
		"pull_request_review.submitted.json": func() Event {
			return reviewEvent("submitted", "COMMENTED", "", true)
		},
		"pull_request_review.submitted.approved.json": func() Event {
			return reviewEvent("submitted", "APPROVED", "Looks good to me.", true)
		},
		"pull_request_review.submitted.changes_requested.json": func() Event {
			return reviewEvent("submitted", "CHANGES_REQUESTED", "Please add a test for the new section.", true)
		},
		"pull_request_review.dismissed.json": func() Event {
			ev := reviewEvent("dismissed", "DISMISSED", "", false)
			ev.Body, ev.Pull.Body, ev.LinkedIssues = "", "", nil       // empty in the upstream example
			ev.Pull.URL = "https://github.com/hellomouse/GNS/pull/902" // as in the upstream example
			return ev
		},
		"workflow_run.completed.json":         func() Event { return runEvent("completed", "completed", "success", true) },
		"workflow_run.completed.failure.json": func() Event { return runEvent("completed", "completed", "failure", true) },
		"workflow_run.completed.pr.json": func() Event {
			ev := runEvent("completed", "completed", "success", true)
			ev.RunPRs = []int{2}
			return ev
		},
		"workflow_run.requested.json": func() Event { return runEvent("requested", "queued", "", false) },
		"merge_group.checks_requested.json": func() Event {
			return Event{Name: "merge_group", Action: "checks_requested", Repo: "octo-org/octo-repo", Installation: 1, Sender: codertocat, Handled: true,
				MergeGroup: &MergeGroup{HeadSHA: "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d", HeadRef: "refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64", PR: 104}}
		},
		"deployment_protection_rule.requested.json": func() Event {
			return Event{Name: "deployment_protection_rule", Action: "requested", Repo: helloWorld, Installation: 1, Sender: codertocat, Handled: true,
				LinkedIssues: []int{1},
				Carries: events.DeploymentRequested{Environment: "production", SHA: prHead, Ref: "refs/heads/changes", RunID: 118578147,
					PRs: []events.DeployPR{{Number: 2, LinkedIssues: []int{1}}}, Sender: "Codertocat"}}
		},
		"check_run.requested_action.json": func() Event {
			// external_id is "" in the example (not autopilot's check run):
			// no issue to answer.
			return Event{Name: "check_run", Action: "requested_action", Repo: "electron/electron", Installation: 690857,
				Sender: forge.User{Login: "codebytere", ID: 2036040, Type: "User"}, Handled: true,
				CheckAction: &CheckAction{CheckRunID: 1494503112, URL: "https://github.com/electron/electron/runs/1494503112", Name: "API Review",
					HeadSHA: "5bd5f196a46b8222fb7484f05faba41a73cf34bd", AppID: 25811, Identifier: "lgtm|26764", PRs: []int{26764}}}
		},
		"workflow_dispatch.json": func() Event {
			return Event{Name: "workflow_dispatch", Repo: octoRepo, Sender: octocat, Handled: true, Sweep: true}
		},
		"schedule.json": func() Event {
			return Event{Name: "schedule", Repo: octoRepo, Sender: octocat, Handled: true, Sweep: true}
		},
		"schedule.minimal.json": func() Event { return Event{Name: "schedule", Handled: true, Sweep: true} },
		"ping.json": func() Event {
			return Event{Name: "ping", Repo: "Octocoders/Hello-World", Sender: codertocat}
		},
		"installation.created.json": func() Event {
			return Event{Name: "installation", Action: "created", Installation: 957387, Sender: codertocat}
		},
		"installation_repositories.added.json": func() Event {
			return Event{Name: "installation_repositories", Action: "added", Installation: 957387, Sender: codertocat}
		},
		"star.created.json": func() Event {
			return Event{Name: "star", Action: "created", Repo: helloWorld, Sender: codertocat}
		},
	}
	for _, file := range ghtest.Files(t) {
		t.Run(file, func(t *testing.T) {
			want, ok := tests[file]
			if !ok {
				t.Fatalf("vendored payload %s has no expectation in this table", file)
			}
			got, err := Decode(ghtest.EventName(file), ghtest.Payload(t, file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			w := want()
			diffEvents(t, *got, w)
		})
	}
}

// diffEvents reports every top-level Event field that differs.
func diffEvents(t *testing.T, got, want Event) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", gv.Type().Field(i).Name, show(g), show(w))
		}
	}
}

func show(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return fmt.Sprintf("&%+v", rv.Elem().Interface())
	}
	return fmt.Sprintf("%#v", v)
}

// TestDecodeBodyEdited: only a pull_request edited delivery with
// changes.body says its sender wrote the description (a title edit does
// not; an opened delivery is told by its action).
func TestDecodeBodyEdited(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		change map[string]any
		want   bool
	}{
		{"description edited", "pull_request.edited.json", nil, true},
		{"title edited", "pull_request.edited.json", map[string]any{"changes": map[string]any{"title": map[string]any{"from": "Update the README"}}}, false},
		{"no changes", "pull_request.edited.json", map[string]any{"changes": ghtest.Delete}, false},
		{"opened", "pull_request.opened.json", nil, false},
		{"synchronize with changes.body", "pull_request.edited.json", map[string]any{"action": "synchronize"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Decode("pull_request", ghtest.Mutate(t, ghtest.Payload(t, tt.file), tt.change))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if ev.BodyEdited != tt.want {
				t.Errorf("BodyEdited = %v, want %v", ev.BodyEdited, tt.want)
			}
		})
	}
}

func TestDecodeRoutesHandledActionsOnly(t *testing.T) {
	tests := []struct {
		file, action string
		handled      bool
	}{
		{"issues.labeled.json", "opened", false},
		{"issues.labeled.json", "edited", false},
		{"issues.labeled.json", "closed", true},
		{"issue_comment.created.json", "deleted", false},
		{"issue_comment.created.json", "edited", true},
		{"pull_request.opened.json", "assigned", false},
		{"pull_request.opened.json", "synchronize", true},
		{"pull_request_review.submitted.json", "edited", false},
		{"workflow_run.completed.json", "in_progress", false},
		{"workflow_run.completed.json", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.action, func(t *testing.T) {
			p := ghtest.Mutate(t, ghtest.Payload(t, tt.file), map[string]any{"action": tt.action})
			ev, err := Decode(ghtest.EventName(tt.file), p)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if ev.Handled != tt.handled || ev.Action != tt.action {
				t.Errorf("got action %q handled %v, want %q %v", ev.Action, ev.Handled, tt.action, tt.handled)
			}
		})
	}
}

func TestDecodeUnknownEventIsNotHandled(t *testing.T) {
	for _, name := range []string{"star", "check_run", "push", "deployment", "Issues", "issues "} {
		t.Run(name, func(t *testing.T) {
			ev, err := Decode(name, ghtest.Payload(t, "issues.labeled.json"))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if ev.Handled || ev.Sweep || ev.Issue != 0 || ev.Name != name {
				t.Errorf("got %+v, want an unhandled %q event without issue", ev, name)
			}
			if ev.Repo != helloWorld {
				t.Errorf("Repo = %q, want the envelope's %q", ev.Repo, helloWorld)
			}
		})
	}
}

func TestDecodeUnhandledActionToleratesMissingMembers(t *testing.T) {
	p := ghtest.Mutate(t, ghtest.Payload(t, "issues.opened.json"), map[string]any{
		"issue.number": ghtest.Delete, "repository": ghtest.Delete,
	})
	ev, err := Decode("issues", p)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if ev.Handled || ev.Issue != 0 || ev.Repo != "" {
		t.Errorf("got %+v, want unhandled with no issue and no repo", ev)
	}
}

func TestDecodeRejectsHandledEventMissingWhatItNeeds(t *testing.T) {
	tests := []struct {
		file  string
		set   map[string]any
		field string
		msg   string
	}{
		{"issue_comment.created.json", map[string]any{"issue.number": ghtest.Delete}, "issue.number", "issue_comment: missing issue.number"},
		{"issue_comment.created.json", map[string]any{"issue": ghtest.Delete}, "issue.number", "issue_comment: missing issue.number"},
		{"issue_comment.created.json", map[string]any{"issue.number": 0}, "issue.number", "issue_comment: missing issue.number"},
		{"issue_comment.created.json", map[string]any{"issue.number": -4}, "issue.number", "issue_comment: issue.number: invalid -4"},
		{"issue_comment.created.json", map[string]any{"comment": ghtest.Delete}, "comment.id", "issue_comment: missing comment.id"},
		{"issue_comment.created.json", map[string]any{"repository": ghtest.Delete}, "repository.full_name", "issue_comment: missing repository.full_name"},
		{"issue_comment.created.json", map[string]any{"repository.full_name": ""}, "repository.full_name", "issue_comment: missing repository.full_name"},
		{"issues.labeled.json", map[string]any{"label": ghtest.Delete}, "label.name", "issues: missing label.name"},
		{"issues.unlabeled.json", map[string]any{"label.name": ""}, "label.name", "issues: missing label.name"},
		{"issues.closed.json", map[string]any{"issue.number": ghtest.Delete}, "issue.number", "issues: missing issue.number"},
		{"pull_request.opened.json", map[string]any{"pull_request": ghtest.Delete}, "pull_request.number", "pull_request: missing pull_request.number"},
		{"pull_request.opened.json", map[string]any{"repository": nil}, "repository.full_name", "pull_request: missing repository.full_name"},
		{"pull_request_review.submitted.json", map[string]any{"review.state": ghtest.Delete}, "review.state", "pull_request_review: missing review.state"},
		{"pull_request_review.submitted.json", map[string]any{"review": ghtest.Delete}, "review.id", "pull_request_review: missing review.id"},
		{"pull_request_review.submitted.json", map[string]any{"pull_request.number": ghtest.Delete}, "pull_request.number", "pull_request_review: missing pull_request.number"},
		{"workflow_run.completed.json", map[string]any{"workflow_run": ghtest.Delete}, "workflow_run.id", "workflow_run: missing workflow_run.id"},
		{"workflow_run.completed.json", map[string]any{"repository": ghtest.Delete}, "repository.full_name", "workflow_run: missing repository.full_name"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			p := ghtest.Mutate(t, ghtest.Payload(t, tt.file), tt.set)
			ev, err := Decode(ghtest.EventName(tt.file), p)
			if err == nil {
				t.Fatalf("Decode = %+v, want error %q", ev, tt.msg)
			}
			var pe *PayloadError
			if !errors.As(err, &pe) || pe.Field != tt.field {
				t.Errorf("error %v: want a *PayloadError for field %q", err, tt.field)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("error %q, want it to start with %q", err, tt.msg)
			}
		})
	}
}

func TestDecodeRejectsWrongTypes(t *testing.T) {
	tests := []struct {
		file  string
		set   map[string]any
		field string
	}{
		{"issue_comment.created.json", map[string]any{"issue.number": "12"}, "issue.number"},
		{"issue_comment.created.json", map[string]any{"comment.id": "492700400"}, "comment.id"},
		{"issue_comment.created.json", map[string]any{"comment.body": 7}, "comment.body"},
		{"issue_comment.created.json", map[string]any{"issue.number": 12.5}, "issue.number"},
		{"issue_comment.created.json", map[string]any{"issue.number": 1e20}, "issue.number"},
		{"issues.labeled.json", map[string]any{"issue.labels": []string{"autopilot"}}, "issue.labels"},
		{"issues.labeled.json", map[string]any{"repository": "Codertocat/Hello-World"}, "repository"},
		{"issues.labeled.json", map[string]any{"action": true}, "action"},
		{"issues.labeled.json", map[string]any{"sender.id": "21031067"}, "sender.id"},
		{"pull_request.opened.json", map[string]any{"pull_request.merged": "false"}, "pull_request.merged"},
		{"pull_request_review.submitted.json", map[string]any{"review.state": []int{1}}, "review.state"},
		{"workflow_run.completed.json", map[string]any{"workflow_run.id": "289782451"}, "workflow_run.id"},
		{"installation.created.json", map[string]any{"installation.id": "957387"}, "installation.id"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.field, func(t *testing.T) {
			p := ghtest.Mutate(t, ghtest.Payload(t, tt.file), tt.set)
			_, err := Decode(ghtest.EventName(tt.file), p)
			var pe *PayloadError
			if !errors.As(err, &pe) {
				t.Fatalf("Decode error = %v, want a *PayloadError", err)
			}
			if pe.Field != tt.field {
				t.Errorf("error %q names field %q, want %q", err, pe.Field, tt.field)
			}
		})
	}
}

func TestDecodeRejectsMalformedPayloads(t *testing.T) {
	const notObject, malformed = "payload is not a JSON object", "malformed JSON"
	tests := []struct{ name, payload, reason string }{
		{"empty", "", notObject},
		{"whitespace", " \n\t", notObject},
		{"null", "null", notObject},
		{"array", `[{"action":"created"}]`, notObject},
		{"string", `"issue_comment"`, notObject},
		{"unterminated", `{"action":"created","issue":{"number":1}`, malformed},
		{"trailing garbage", `{"action":"created"} {"action":"deleted"}`, malformed},
		{"bare word", `{"action":created}`, malformed},
		{"bad escape", `{"action":"\x"}`, malformed},
		{"trailing comma", `{"action":"created",}`, malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, event := range []string{"issue_comment", "star", "schedule"} {
				ev, err := Decode(event, []byte(tt.payload))
				var pe *PayloadError
				if !errors.As(err, &pe) || ev != nil {
					t.Fatalf("Decode(%s) = %+v, %v; want nil and a *PayloadError", event, ev, err)
				}
				if pe.Reason != tt.reason || pe.Event != event {
					t.Errorf("Decode(%s) error %q, want reason %q", event, err, tt.reason)
				}
			}
		})
	}
}

func TestDecodeRejectsMalformedTimes(t *testing.T) {
	p := ghtest.Mutate(t, ghtest.Payload(t, "issue_comment.created.json"), map[string]any{"comment.created_at": "yesterday"})
	ev, err := Decode("issue_comment", p)
	var pe *PayloadError
	if !errors.As(err, &pe) || ev != nil {
		t.Fatalf("Decode = %+v, %v; want nil and a *PayloadError", ev, err)
	}
}

func TestDecodeRejectsTruncatedVendoredPayloads(t *testing.T) {
	for _, file := range ghtest.Files(t) {
		p := ghtest.Payload(t, file)
		for _, frac := range []int{1, 2, 3, 5, 8, 13} {
			cut := len(p) * frac / 16
			if _, err := Decode(ghtest.EventName(file), p[:cut]); err == nil {
				t.Errorf("%s cut at %d/%d bytes: Decode succeeded, want an error", file, cut, len(p))
			}
		}
		// The last byte is the closing brace (before the newline).
		end := bytes.LastIndexByte(p, '}')
		if _, err := Decode(ghtest.EventName(file), p[:end]); err == nil {
			t.Errorf("%s without its closing brace: Decode succeeded, want an error", file)
		}
	}
}

func TestDecodeRejectsInvalidRepositoryNames(t *testing.T) {
	for _, repo := range []string{"Hello-World", "a/b/c", "/b", "a/", "a/..", "a/.", "../x", "a b/c", "a/b c", "a/b\n", "a/b?x=1", "a/b#1", "ow%2Fn/r"} {
		t.Run(repo, func(t *testing.T) {
			p := ghtest.Mutate(t, ghtest.Payload(t, "issues.labeled.json"), map[string]any{"repository.full_name": repo})
			_, err := Decode("issues", p)
			var pe *PayloadError
			if !errors.As(err, &pe) || pe.Field != "repository.full_name" {
				t.Errorf("Decode with full_name %q: error %v, want one naming repository.full_name", repo, err)
			}
		})
	}
	for _, repo := range []string{"a/b", "octo-org/octo.repo", "user_ghe/repo_1", "A1-b/.github"} {
		p := ghtest.Mutate(t, ghtest.Payload(t, "issues.labeled.json"), map[string]any{"repository.full_name": repo})
		if ev, err := Decode("issues", p); err != nil || ev.Repo != repo {
			t.Errorf("Decode with full_name %q = %v, %v; want it accepted", repo, ev, err)
		}
	}
}

func TestDecodeRejectsOversizedPayloadWithoutParsing(t *testing.T) {
	// 30 MB: a comment body GitHub would never deliver.
	body := strings.Repeat("A", 30<<20)
	p := []byte(`{"action":"created","comment":{"id":1,"body":"` + body + `"}}`)
	ev, err := Decode("issue_comment", p)
	var pe *PayloadError
	if !errors.As(err, &pe) || ev != nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("Decode(30 MB) = %v, %v; want nil and a size error", ev, err)
	}
}

func TestDecodeAcceptsPayloadAtTheSizeLimit(t *testing.T) {
	p := ghtest.Payload(t, "issue_comment.created.json")
	padded := append(bytes.Repeat([]byte(" "), MaxPayloadBytes-len(p)), p...)
	if _, err := Decode("issue_comment", padded); err != nil {
		t.Fatalf("Decode(%d bytes) = %v, want success at the limit", len(padded), err)
	}
	if _, err := Decode("issue_comment", append([]byte(" "), padded...)); err == nil {
		t.Fatalf("Decode(%d bytes) succeeded, want an error one byte over the limit", len(padded)+1)
	}
}

func TestDecodeRequiresEventName(t *testing.T) {
	_, err := Decode("", ghtest.Payload(t, "issues.labeled.json"))
	if err == nil || !strings.Contains(err.Error(), "missing event name") {
		t.Fatalf("Decode(\"\") error = %v, want missing event name", err)
	}
}

func TestDecodeReviewStateIsUpperCased(t *testing.T) {
	for webhook, want := range map[string]string{"approved": "APPROVED", "changes_requested": "CHANGES_REQUESTED", "commented": "COMMENTED", "dismissed": "DISMISSED", "APPROVED": "APPROVED"} {
		p := ghtest.Mutate(t, ghtest.Payload(t, "pull_request_review.submitted.json"), map[string]any{"review.state": webhook})
		ev, err := Decode("pull_request_review", p)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if ev.Review.State != want {
			t.Errorf("review.state %q decoded as %q, want %q", webhook, ev.Review.State, want)
		}
	}
}

func TestDecodeLinksPullRequestBodies(t *testing.T) {
	tests := []struct {
		file, path, body string
		want             []int
	}{
		{"pull_request.opened.json", "pull_request.body", "Closes #4\n\nAutopilot-Issue: #9", []int{4, 9}},
		{"pull_request.edited.json", "pull_request.body", "Fixes octo-org/other#3", nil},
		{"pull_request_review.submitted.approved.json", "pull_request.body", "resolves #12", []int{12}},
		{"issue_comment.created.pr.json", "issue.body", "fixes #5, fixes #6", []int{5, 6}},
		{"pull_request.opened.json", "pull_request.body", "```\nFixes #1\n```", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.body, func(t *testing.T) {
			p := ghtest.Mutate(t, ghtest.Payload(t, tt.file), map[string]any{tt.path: tt.body})
			ev, err := Decode(ghtest.EventName(tt.file), p)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(ev.LinkedIssues, tt.want) {
				t.Errorf("LinkedIssues = %v, want %v", ev.LinkedIssues, tt.want)
			}
		})
	}
}

func TestDecodeCommentOnIssueLinksNothing(t *testing.T) {
	// An issue body saying "Fixes #3" is not a PR: nothing is linked.
	p := ghtest.Mutate(t, ghtest.Payload(t, "issue_comment.created.json"), map[string]any{"issue.body": "Fixes #3"})
	ev, err := Decode("issue_comment", p)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if ev.IsPR || ev.LinkedIssues != nil {
		t.Errorf("IsPR %v LinkedIssues %v, want an issue with no links", ev.IsPR, ev.LinkedIssues)
	}
}

func TestDecodeMergedFromMergedAt(t *testing.T) {
	// Review payloads have no "merged" member; merged_at tells.
	p := ghtest.Mutate(t, ghtest.Payload(t, "pull_request_review.submitted.json"), map[string]any{
		"pull_request.merged_at": "2019-05-15T15:21:18Z", "pull_request.state": "closed",
	})
	ev, err := Decode("pull_request_review", p)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !ev.Pull.Merged {
		t.Errorf("Pull.Merged = false, want true when merged_at is set")
	}
}

func TestIssueKey(t *testing.T) {
	tests := []struct {
		file  string
		repo  string
		issue int
		ok    bool
	}{
		{"issues.labeled.json", helloWorld, 1, true},
		{"issue_comment.created.json", helloWorld, 1, true},
		{"issue_comment.created.pr.json", helloWorld, 2, true},
		{"pull_request.opened.json", helloWorld, 2, true},
		{"pull_request_review.submitted.json", helloWorld, 2, true},
		{"issues.opened.json", "", 0, false},          // not handled
		{"workflow_run.completed.json", "", 0, false}, // about a run, not an issue
		{"schedule.json", "", 0, false},               // sweep
		{"workflow_dispatch.json", "", 0, false},      // sweep
		{"star.created.json", "", 0, false},
		{"ping.json", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ev, err := Decode(ghtest.EventName(tt.file), ghtest.Payload(t, tt.file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			repo, issue, ok := IssueKey(ev)
			if repo != tt.repo || issue != tt.issue || ok != tt.ok {
				t.Errorf("IssueKey = %q, %d, %v; want %q, %d, %v", repo, issue, ok, tt.repo, tt.issue, tt.ok)
			}
		})
	}
	if _, _, ok := IssueKey(nil); ok {
		t.Errorf("IssueKey(nil) ok = true, want false")
	}
}

func BenchmarkDecodeIssueComment(b *testing.B) {
	p := ghtest.Payload(b, "issue_comment.created.pr.json")
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode("issue_comment", p); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWorkflowRunPRNumbers(t *testing.T) {
	base := ghtest.Payload(t, "workflow_run.completed.pr.json")
	pr := func(n any) map[string]any {
		return map[string]any{"number": n, "url": "https://api.github.com/repos/o/r/pulls/1"}
	}
	tests := []struct {
		name string
		prs  any
		want []int
	}{
		{name: "one PR", prs: []any{pr(2)}, want: []int{2}},
		{name: "several, duplicates dropped, order kept", prs: []any{pr(7), pr(3), pr(7)}, want: []int{7, 3}},
		{name: "none (a dispatched run)", prs: []any{}, want: nil},
		{name: "member absent", prs: ghtest.Delete, want: nil},
		{name: "null", prs: nil, want: nil},
		{name: "non-positive numbers ignored", prs: []any{pr(0), pr(-4), pr(5)}, want: []int{5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := Decode("workflow_run", ghtest.Mutate(t, base, map[string]any{"workflow_run.pull_requests": tc.prs}))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(ev.RunPRs, tc.want) {
				t.Errorf("RunPRs = %v, want %v", ev.RunPRs, tc.want)
			}
		})
	}
	_, err := Decode("workflow_run", ghtest.Mutate(t, base, map[string]any{"workflow_run.pull_requests.0.number": "2"}))
	var pe *PayloadError
	if !errors.As(err, &pe) || pe.Field != "workflow_run.pull_requests.number" {
		t.Errorf("a string PR number: err %v, want a PayloadError naming workflow_run.pull_requests.number", err)
	}
}
