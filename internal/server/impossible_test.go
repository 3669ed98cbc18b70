package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// TestIntakeRefusesWhatGitHubCouldNeverSend: a signed delivery whose
// comment, issue, PR or review body is over GitHub's 65,536 characters, or
// whose title is over 1,024, is refused with 400 naming the field and the
// limit, and counted (outcome "impossible"); texts at the limits, in
// 4-byte characters, are queued.
func TestIntakeRefusesWhatGitHubCouldNeverSend(t *testing.T) {
	long, atLimit := strings.Repeat("x", 65537), strings.Repeat("😀", 65536)
	tests := []struct {
		name, file string
		set        map[string]any
		want       int
		field      string
	}{
		{"a 1 MB comment", "issue_comment.created.json", map[string]any{"comment.body": strings.Repeat("y", 1<<20)}, 400, "comment body"},
		{"a comment one over", "issue_comment.created.json", map[string]any{"comment.body": long}, 400, "comment body"},
		{"an issue body one over", "issues.labeled.json", map[string]any{"issue.body": long}, 400, "issue body"},
		{"an issue title over 1,024", "issues.labeled.json", map[string]any{"issue.title": strings.Repeat("t", 1025)}, 400, "title"},
		{"a PR body one over", "pull_request.opened.json", map[string]any{"pull_request.body": long}, 400, "body"},
		{"a review body one over", "pull_request_review.submitted.json", map[string]any{"review.body": long}, 400, "review body"},
		{"a comment at the limit", "issue_comment.created.json", map[string]any{"comment.body": atLimit, "issue.body": atLimit}, 202, ""},
		{"an issue at the limits", "issues.labeled.json", map[string]any{"issue.body": atLimit, "issue.title": strings.Repeat("😀", 1024)}, 202, ""},
	}
	rec := newRecorder()
	s, srv := start(t, testConfig(), Deps{Processor: rec})
	accepted := 0
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := delivery{event: ghtest.EventName(tt.file), id: "imp-" + string(rune('a'+i)), body: ghtest.Mutate(t, ghtest.Payload(t, tt.file), tt.set)}
			code, msg := answer(t, d, srv.url)
			if code != tt.want {
				t.Fatalf("answered %d %q, want %d", code, msg, tt.want)
			}
			if code == http.StatusAccepted {
				accepted++
				return
			}
			if !strings.Contains(msg, tt.field) || !strings.Contains(msg, "GitHub") {
				t.Errorf("answer %q does not name %q and GitHub's limit", msg, tt.field)
			}
		})
	}
	rec.waitDone(t, accepted)
	refused := 0.0
	for _, ev := range []string{"issue_comment", "issues", "pull_request", "pull_request_review"} {
		refused += series(t, s.metrics, "autopilot_webhook_deliveries_total", "event", ev, "outcome", OutcomeImpossible)
	}
	if refused != 6 {
		t.Errorf("%v deliveries counted impossible, want 6", refused)
	}
}

// answer posts d and returns the status and the answer's text.
func answer(t *testing.T, d delivery, base string) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(d.request(t, base))
	if err != nil {
		t.Fatalf("post %s: %v", d.id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
