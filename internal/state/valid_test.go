package state

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name   string
		change func(*State)
		field  string // FieldError.Field; "" = valid
	}{
		{"sample is valid", func(*State) {}, ""},
		{"zero sub-step is valid", func(s *State) { s.SubStep = SubStep{} }, ""},
		{"phase 0 with another name is valid", func(s *State) { s.SubStep = SubStep{Name: "awaiting-human-review"} }, ""},
		{"awaiting invocation at phase 0", func(s *State) { s.SubStep = SubStep{Name: AwaitingInvocation} }, ""},
		{"bot login decides", func(s *State) { s.Decisions[0].By = "renovate[bot]" }, ""},
		{"schema", func(s *State) { s.Schema = 2 }, "schema"},
		{"negative version", func(s *State) { s.Version = -1 }, "version"},
		{"repo without owner", func(s *State) { s.Repo = "hello" }, "repo"},
		{"repo with space", func(s *State) { s.Repo = "a b/c" }, "repo"},
		{"issue zero", func(s *State) { s.Issue = 0 }, "issue"},
		{"sig not hex", func(s *State) { s.Sig = "zz" }, "sig"},
		{"flow upper-case", func(s *State) { s.Flow = "Greenfield" }, "flow"},
		{"negative step", func(s *State) { s.Step = -1 }, "step"},
		{"slug empty", func(s *State) { s.Slug = "" }, "slug"},
		{"status unknown", func(s *State) { s.Status = "done" }, "status"},
		{"run unknown", func(s *State) { s.Run = "paused" }, "run"},
		{"retry count 4", func(s *State) { s.RetryCount = 4 }, "retry_count"},
		{"retry count negative", func(s *State) { s.RetryCount = -1 }, "retry_count"},
		{"cycle zero", func(s *State) { s.Cycle = 0 }, "cycle"},
		{"negative phase", func(s *State) { s.SubStep.Phase = -1 }, "sub_step.phase"},
		{"sub-step name not kebab", func(s *State) { s.SubStep.Name = "Architecture Review" }, "sub_step.name"},
		{"sub-step name trailing dash", func(s *State) { s.SubStep.Name = "review-" }, "sub_step.name"},
		{"sub-step detail without name", func(s *State) { s.SubStep = SubStep{Detail: "x"} }, "sub_step.name"},
		{"awaiting invocation not at phase 0", func(s *State) { s.SubStep = SubStep{Phase: 2, Name: AwaitingInvocation} }, "sub_step.phase"},
		{"banner slug", func(s *State) { s.Steps[1].Slug = "Bad Slug" }, "steps[1].slug"},
		{"banner status", func(s *State) { s.Steps[1].Status = "DONE" }, "steps[1].status"},
		{"banner retries", func(s *State) { s.Steps[1].Retries = 5 }, "steps[1].retries"},
		{"completed step", func(s *State) { s.Completed[0].Step = -2 }, "completed[0].step"},
		{"completed slug", func(s *State) { s.Completed[1].Slug = "" }, "completed[1].slug"},
		{"completed cycle", func(s *State) { s.Completed[0].Cycle = -1 }, "completed[0].cycle"},
		{"decision gate", func(s *State) { s.Decisions[0].Gate = "Gate 1" }, "decisions[0].gate"},
		{"decision letter", func(s *State) { s.Decisions[0].Option = "E" }, "decisions[0].option"},
		{"decision lookalike letter", func(s *State) { s.Decisions[0].Option = "А" }, "decisions[0].option"},
		{"decision login", func(s *State) { s.Decisions[0].By = "@octocat" }, "decisions[0].by"},
		{"decision comment id", func(s *State) { s.Decisions[0].CommentID = -1 }, "decisions[0].comment_id"},
		{"decision javascript link", func(s *State) { s.Decisions[0].Link = "javascript:alert(1)" }, "decisions[0].link"},
		{"decision link breaking markdown", func(s *State) { s.Decisions[0].Link = "https://x.example/a)(b" }, "decisions[0].link"},
		{"archived decisions", func(s *State) { archivedTwo(s) }, ""},
		{"archived negative", func(s *State) { s.DecisionsArchived = -1 }, "decisions_archived"},
		{"archived without archives", func(s *State) { s.DecisionsArchived = 3 }, "archives"},
		{"archive range", func(s *State) { archivedTwo(s); s.Archives[0].To = 0 }, "archives[0]"},
		{"archive gap", func(s *State) { archivedTwo(s); s.Archives[1].From = 12 }, "archives[1].from"},
		{"archive count", func(s *State) { archivedTwo(s); s.DecisionsArchived = 25 }, "archives[1].to"},
		{"archive link", func(s *State) { archivedTwo(s); s.Archives[1].URL = "javascript:x" }, "archives[1].url"},
		{"too many archives", func(s *State) {
			for i := range MaxArchives + 1 {
				s.Archives = append(s.Archives, DecisionArchive{From: i + 1, To: i + 1})
			}
			s.DecisionsArchived = MaxArchives + 1
		}, "archives"},
		{"retry attempt", func(s *State) { s.RetryLog[0].Attempt = 0 }, "retry_log[0].attempt"},
		{"retry step", func(s *State) { s.RetryLog[0].Step = -1 }, "retry_log[0].step"},
		{"task id", func(s *State) { s.Tasks[0].ID = "" }, "tasks[0].id"},
		{"task id twice", func(s *State) { s.Tasks[1].ID = "01" }, "tasks[1].id"},
		{"task kind", func(s *State) { s.Tasks[0].Kind = "story" }, "tasks[0].kind"},
		{"task jira state", func(s *State) { s.Tasks[0].Jira = "done" }, "tasks[0].jira"},
		{"task jira key", func(s *State) { s.Tasks[0].JiraKey = "proj-1" }, "tasks[0].jira_key"},
		{"task jira url", func(s *State) { s.Tasks[0].JiraURL = "ftp://x" }, "tasks[0].jira_url"},
		{"task points NaN", func(s *State) { s.Tasks[0].Points = math.NaN() }, "tasks[0].points"},
		{"task points negative", func(s *State) { s.Tasks[0].Points = -1 }, "tasks[0].points"},
		{"gate with one option", func(s *State) { s.Gate.Options = s.Gate.Options[:1] }, "gate"},
		{"gate recommends missing option", func(s *State) { s.Gate.Recommend = "D" }, "gate"},
		{"gate comment id", func(s *State) { s.Gate.CommentID = -1 }, "gate.comment_id"},
		{"gate action unknown", func(s *State) { s.Gate.Options[1].Action = "explode" }, "gate.options[1].action"},
		{"gate action empty", func(s *State) { s.Gate.Options[0].Action = "" }, "gate.options[0].action"},
		{"gate action missing its argument", func(s *State) { s.Gate.Options[0].Action = "back:" }, "gate.options[0].action"},
		{"gate action with a stray argument", func(s *State) { s.Gate.Options[0].Action = "abort:now" }, "gate.options[0].action"},
		{"gate action bad step slug", func(s *State) { s.Gate.Options[0].Action = "back:Plan Step" }, "gate.options[0].action"},
		{"gate action back to a step", func(s *State) { s.Gate.Options[0].Action = "back:plan" }, ""},
		{"gate action flow", func(s *State) { s.Gate.Options[0].Action = "flow:greenfield" }, ""},
		{"gate action skip with requester", func(s *State) { s.Gate.Options[0].Action = "skip-reason:octo-cat" }, ""},
		{"gate action skip without requester", func(s *State) { s.Gate.Options[0].Action = "skip-reason" }, ""},
		{"ledger without outcome", func(s *State) { s.Ledger[0].Outcome = "" }, "ledger[0]"},
		{"outbox without kind", func(s *State) { s.Outbox[0].Kind = "" }, "outbox[0].kind"},
		{"stop without reason", func(s *State) { s.Stop = &Stop{} }, "stop"},
		{"stop resumes to unknown", func(s *State) { s.Stop = &Stop{Reason: "user-abort", Resume: "x"} }, "stop"},
		{"limits counter", func(s *State) { s.Limits.Sessions = -1 }, "limits"},
		{"confidence over 1", func(s *State) { s.Limits.LastConfidence = 1.5 }, "limits.last_confidence"},
		{"review counter", func(s *State) { s.Review = &ReviewLoop{Iteration: -1} }, "review"},
		{"exec attempt", func(s *State) { s.Exec.Attempt = -1 }, "exec"},
		{"seq", func(s *State) { s.Seq = -1 }, "seq"},
		{"failed sessions slug", func(s *State) { s.FailedSessions = map[string]int{"Bad": 1} }, "failed_sessions"},
		{"linked pr", func(s *State) { s.LinkedPRs = []int{0} }, "linked_prs[0]"},
		{"link vouch", func(s *State) { s.LinkVouches = []LinkVouch{{PR: 3, By: "maria", Body: "abc"}} }, "link_vouches[0]"},
		{"invalid utf-8 deep", func(s *State) { s.Outbox[0].Inputs = map[string]string{"k": "\xff"} }, "outbox[0].inputs[k]"},
		{"invalid utf-8 map key", func(s *State) { s.Outbox[0].Inputs = map[string]string{"\xff": "v"} }, "outbox[0].inputs.key"},
		{"time out of range", func(s *State) { s.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "updated_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sample()
			tt.change(s)
			err := Valid(s)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Valid() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Valid() = %v, want a FieldError on %s", err, tt.field)
			}
			if fe.Field != tt.field {
				t.Errorf("Valid() names field %q (%v), want %q", fe.Field, err, tt.field)
			}
			if !strings.HasPrefix(err.Error(), tt.field+": ") {
				t.Errorf("error text %q does not start with the field", err)
			}
		})
	}
}

// A gate option whose action the engine does not know is refused, and the
// error names the action, so a bad state comment says what is wrong.
func TestValidRefusesUnknownGateAction(t *testing.T) {
	s := sample()
	s.Gate.Options[0].Action = "self-destruct"
	err := Valid(s)
	if err == nil || !strings.Contains(err.Error(), `"self-destruct"`) {
		t.Fatalf("Valid() = %v, want an error naming the action", err)
	}
}

func TestValidNil(t *testing.T) {
	if err := Valid(nil); err == nil {
		t.Error("Valid(nil) = nil")
	}
}
