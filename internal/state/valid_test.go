package state_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name   string
		change func(*state.State)
		field  string // FieldError.Field; "" = valid
	}{
		{"sample is valid", func(*state.State) {}, ""},
		{"zero sub-step is valid", func(s *state.State) { s.SubStep = state.SubStep{} }, ""},
		{"phase 0 with another name is valid", func(s *state.State) { s.SubStep = state.SubStep{Name: "awaiting-human-review"} }, ""},
		{"awaiting invocation at phase 0", func(s *state.State) { s.SubStep = state.SubStep{Name: state.AwaitingInvocation} }, ""},
		{"bot login decides", func(s *state.State) { s.Decisions[0].By = "renovate[bot]" }, ""},
		{"schema", func(s *state.State) { s.Schema = 3 }, "schema"},
		{"negative version", func(s *state.State) { s.Version = -1 }, "version"},
		{"repo without owner", func(s *state.State) { s.Repo = "hello" }, "repo"},
		{"repo with space", func(s *state.State) { s.Repo = "a b/c" }, "repo"},
		{"issue zero", func(s *state.State) { s.Issue = 0 }, "issue"},
		{"sig not hex", func(s *state.State) { s.Sig = "zz" }, "sig"},
		{"flow upper-case", func(s *state.State) { s.Flow = "Greenfield" }, "flow"},
		{"negative step", func(s *state.State) { s.Step = -1 }, "step"},
		{"slug empty", func(s *state.State) { s.Slug = "" }, "slug"},
		{"status unknown", func(s *state.State) { s.Status = "done" }, "status"},
		{"run unknown", func(s *state.State) { s.Run = "paused" }, "run"},
		{"retry count 4", func(s *state.State) { s.RetryCount = 4 }, "retry_count"},
		{"retry count negative", func(s *state.State) { s.RetryCount = -1 }, "retry_count"},
		{"cycle zero", func(s *state.State) { s.Cycle = 0 }, "cycle"},
		{"negative phase", func(s *state.State) { s.SubStep.Phase = -1 }, "sub_step.phase"},
		{"sub-step name not kebab", func(s *state.State) { s.SubStep.Name = "Architecture Review" }, "sub_step.name"},
		{"sub-step name trailing dash", func(s *state.State) { s.SubStep.Name = "review-" }, "sub_step.name"},
		{"sub-step detail without name", func(s *state.State) { s.SubStep = state.SubStep{Detail: "x"} }, "sub_step.name"},
		{"awaiting invocation not at phase 0", func(s *state.State) { s.SubStep = state.SubStep{Phase: 2, Name: state.AwaitingInvocation} }, "sub_step.phase"},
		{"banner slug", func(s *state.State) { s.Steps[1].Slug = "Bad Slug" }, "steps[1].slug"},
		{"banner status", func(s *state.State) { s.Steps[1].Status = "DONE" }, "steps[1].status"},
		{"banner retries", func(s *state.State) { s.Steps[1].Retries = 5 }, "steps[1].retries"},
		{"completed step", func(s *state.State) { s.Completed[0].Step = -2 }, "completed[0].step"},
		{"completed slug", func(s *state.State) { s.Completed[1].Slug = "" }, "completed[1].slug"},
		{"completed cycle", func(s *state.State) { s.Completed[0].Cycle = -1 }, "completed[0].cycle"},
		{"decision gate", func(s *state.State) { s.Decisions[0].Gate = "Gate 1" }, "decisions[0].gate"},
		{"decision letter", func(s *state.State) { s.Decisions[0].Option = "E" }, "decisions[0].option"},
		{"decision lookalike letter", func(s *state.State) { s.Decisions[0].Option = "А" }, "decisions[0].option"},
		{"decision login", func(s *state.State) { s.Decisions[0].By = "@octocat" }, "decisions[0].by"},
		{"decision comment id", func(s *state.State) { s.Decisions[0].CommentID = -1 }, "decisions[0].comment_id"},
		{"decision javascript link", func(s *state.State) { s.Decisions[0].Link = "javascript:alert(1)" }, "decisions[0].link"},
		{"decision link breaking markdown", func(s *state.State) { s.Decisions[0].Link = "https://x.example/a)(b" }, "decisions[0].link"},
		{"archived decisions", func(s *state.State) { statetest.ArchivedTwo(s) }, ""},
		{"archived negative", func(s *state.State) { s.DecisionsArchived = -1 }, "decisions_archived"},
		{"archived without archives", func(s *state.State) { s.DecisionsArchived = 3 }, "archives"},
		{"archive range", func(s *state.State) { statetest.ArchivedTwo(s); s.Archives[0].To = 0 }, "archives[0]"},
		{"archive gap", func(s *state.State) { statetest.ArchivedTwo(s); s.Archives[1].From = 12 }, "archives[1].from"},
		{"archive count", func(s *state.State) { statetest.ArchivedTwo(s); s.DecisionsArchived = 25 }, "archives[1].to"},
		{"archive link", func(s *state.State) { statetest.ArchivedTwo(s); s.Archives[1].URL = "javascript:x" }, "archives[1].url"},
		{"too many archives", func(s *state.State) {
			for i := range state.MaxArchives + 1 {
				s.Archives = append(s.Archives, state.DecisionArchive{From: i + 1, To: i + 1})
			}
			s.DecisionsArchived = state.MaxArchives + 1
		}, "archives"},
		{"retry attempt", func(s *state.State) { s.RetryLog[0].Attempt = 0 }, "retry_log[0].attempt"},
		{"retry step", func(s *state.State) { s.RetryLog[0].Step = -1 }, "retry_log[0].step"},
		{"task id", func(s *state.State) { s.Tasks[0].ID = "" }, "tasks[0].id"},
		{"task id twice", func(s *state.State) { s.Tasks[1].ID = "01" }, "tasks[1].id"},
		{"task kind", func(s *state.State) { s.Tasks[0].Kind = "story" }, "tasks[0].kind"},
		{"task sync state", func(s *state.State) { s.Tasks[0].Sync = "done" }, "tasks[0].sync"},
		{"task key", func(s *state.State) { s.Tasks[0].Key = "proj-1" }, "tasks[0].key"},
		{"task url", func(s *state.State) { s.Tasks[0].URL = "ftp://x" }, "tasks[0].url"},
		{"task points NaN", func(s *state.State) { s.Tasks[0].Points = math.NaN() }, "tasks[0].points"},
		{"task points negative", func(s *state.State) { s.Tasks[0].Points = -1 }, "tasks[0].points"},
		{"gate with one option", func(s *state.State) { s.Gate.Options = s.Gate.Options[:1] }, "gate"},
		{"gate recommends missing option", func(s *state.State) { s.Gate.Recommend = "D" }, "gate"},
		{"gate comment id", func(s *state.State) { s.Gate.CommentID = -1 }, "gate.comment_id"},
		{"gate action unknown", func(s *state.State) { s.Gate.Options[1].Action = "explode" }, "gate.options[1].action"},
		{"gate action empty", func(s *state.State) { s.Gate.Options[0].Action = "" }, "gate.options[0].action"},
		{"gate action missing its argument", func(s *state.State) { s.Gate.Options[0].Action = "back:" }, "gate.options[0].action"},
		{"gate action with a stray argument", func(s *state.State) { s.Gate.Options[0].Action = "abort:now" }, "gate.options[0].action"},
		{"gate action bad step slug", func(s *state.State) { s.Gate.Options[0].Action = "back:Plan Step" }, "gate.options[0].action"},
		{"gate action back to a step", func(s *state.State) { s.Gate.Options[0].Action = "back:plan" }, ""},
		{"gate action flow", func(s *state.State) { s.Gate.Options[0].Action = "flow:greenfield" }, ""},
		{"gate action skip with requester", func(s *state.State) { s.Gate.Options[0].Action = "skip-reason:octo-cat" }, ""},
		{"gate action skip without requester", func(s *state.State) { s.Gate.Options[0].Action = "skip-reason" }, ""},
		{"ledger without outcome", func(s *state.State) { s.Ledger[0].Outcome = "" }, "ledger[0]"},
		{"outbox without kind", func(s *state.State) { s.Outbox[0].Kind = "" }, "outbox[0].kind"},
		{"stop without reason", func(s *state.State) { s.Stop = &state.Stop{} }, "stop"},
		{"stop resumes to unknown", func(s *state.State) { s.Stop = &state.Stop{Reason: "user-abort", Resume: "x"} }, "stop"},
		{"limits counter", func(s *state.State) { s.Limits.Sessions = -1 }, "limits"},
		{"confidence over 1", func(s *state.State) { s.Limits.LastConfidence = 1.5 }, "limits.last_confidence"},
		{"review counter", func(s *state.State) { s.Review = &state.ReviewLoop{Iteration: -1} }, "review"},
		{"exec attempt", func(s *state.State) { s.Exec.Attempt = -1 }, "exec"},
		{"seq", func(s *state.State) { s.Seq = -1 }, "seq"},
		{"failed sessions slug", func(s *state.State) { s.FailedSessions = map[string]int{"Bad": 1} }, "failed_sessions"},
		{"linked pr", func(s *state.State) { s.LinkedPRs = []int{0} }, "linked_prs[0]"},
		{"link vouch", func(s *state.State) { s.LinkVouches = []state.LinkVouch{{PR: 3, By: "maria", Body: "abc"}} }, "link_vouches[0]"},
		{"invalid utf-8 deep", func(s *state.State) { s.Outbox[0].Inputs = map[string]string{"k": "\xff"} }, "outbox[0].inputs[k]"},
		{"invalid utf-8 map key", func(s *state.State) { s.Outbox[0].Inputs = map[string]string{"\xff": "v"} }, "outbox[0].inputs.key"},
		{"time out of range", func(s *state.State) { s.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "updated_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := statetest.Sample()
			tt.change(s)
			err := state.Valid(s)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Valid() = %v, want nil", err)
				}
				return
			}
			var fe *state.FieldError
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
	s := statetest.Sample()
	s.Gate.Options[0].Action = "self-destruct"
	err := state.Valid(s)
	if err == nil || !strings.Contains(err.Error(), `"self-destruct"`) {
		t.Fatalf("Valid() = %v, want an error naming the action", err)
	}
}

func TestValidNil(t *testing.T) {
	if err := state.Valid(nil); err == nil {
		t.Error("Valid(nil) = nil")
	}
}
