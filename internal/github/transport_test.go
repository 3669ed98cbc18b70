package github

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

const commentPath = "/repos/octocat/Hello-World/issues/comments/1"

// hangUp closes the connection without an answer (a connection reset).
func hangUp(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	}
}

func TestTransientFailuresRetryWithBackoffAndJitter(t *testing.T) {
	ok := status(200, fixture(t, "comment.json"))
	bad := status(502, serverErrorBody)
	tests := []struct {
		name       string
		steps      []http.HandlerFunc
		wantErr    int // TransientError status expected, -1 for success
		wantReqs   int
		wantSleeps []time.Duration
	}{
		{"502 twice then 200", []http.HandlerFunc{bad, bad, ok}, -1, 3,
			[]time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}},
		{"502 until retries run out", []http.HandlerFunc{bad}, 502, 4,
			[]time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}},
		{"connection reset then 200", []http.HandlerFunc{hangUp(t), ok}, -1, 2,
			[]time.Duration{750 * time.Millisecond}},
		{"connection reset every time", []http.HandlerFunc{hangUp(t)}, 0, 4,
			[]time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}},
	}
	for _, tt := range tests {
		for _, method := range []string{"GET", "PATCH"} {
			t.Run(tt.name+"/"+method, func(t *testing.T) {
				e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
				e.handle(method+" "+commentPath, script(tt.steps...))
				var err error
				if method == "GET" {
					_, err = e.client.GetComment(context.Background(), 1)
				} else {
					_, err = e.client.EditComment(context.Background(), 1, "Me too")
				}
				if tt.wantErr < 0 {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
				} else {
					var te *forge.TransientError
					if !errors.As(err, &te) || te.Status != tt.wantErr {
						t.Fatalf("err = %v, want TransientError status %d", err, tt.wantErr)
					}
				}
				if n := len(e.requests()); n != tt.wantReqs {
					t.Errorf("%d requests, want %d", n, tt.wantReqs)
				}
				if got := e.clock.Sleeps(); !reflect.DeepEqual(got, tt.wantSleeps) {
					t.Errorf("sleeps = %v, want %v (exponential, jitter 0.5)", got, tt.wantSleeps)
				}
			})
		}
	}
}

func TestValidationErrorIsNeverRepeatedUnchanged(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	e.handle("PATCH "+commentPath, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "comments") && strings.Contains(readAll(r), "bad") {
			reply(w, 422, []byte(`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/comments#update-an-issue-comment","status":"422"}`))
			return
		}
		reply(w, 200, fixture(t, "comment.json"))
	})
	ctx := context.Background()
	for i := range 2 {
		_, err := e.client.EditComment(ctx, 1, "bad body")
		if !errors.Is(err, forge.ErrValidation) {
			t.Fatalf("call %d: err = %v, want ErrValidation", i, err)
		}
		if !strings.Contains(err.Error(), "body is too long") {
			t.Errorf("call %d: err %q lacks GitHub's message", i, err)
		}
	}
	if n := len(e.requests()); n != 1 {
		t.Fatalf("%d requests, want 1: an identical request that got a 422 was repeated", n)
	}
	if _, err := e.client.EditComment(ctx, 1, "corrected"); err != nil {
		t.Fatalf("a corrected request: %v", err)
	}
	if n := len(e.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the corrected one is a different request)", n)
	}
}

func TestOverlongCommentIsRefusedWithoutARequest(t *testing.T) {
	e := newEnv(t, "", nil)
	body := strings.Repeat("é", MaxCommentRunes+1)
	if _, err := e.client.CreateComment(context.Background(), 1, body); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("CreateComment err = %v, want ErrValidation", err)
	}
	if _, err := e.client.EditComment(context.Background(), 1, body); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("EditComment err = %v, want ErrValidation", err)
	}
	if _, err := e.client.EditComment(context.Background(), 1, strings.Repeat("é", MaxCommentRunes)); err == nil {
		t.Error("exactly 65,536 characters must be sent (no handler: expect a 404 error)")
	}
	if n := len(e.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestMutationsAreSpacedAtLeastTheGap(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, fixture(t, "labels.json")))
	e.handle("PATCH "+commentPath, status(200, fixture(t, "comment.json")))
	e.handle("GET "+issuePath, status(200, fixture(t, "issue.json")))
	ctx := context.Background()
	steps := []func() error{
		func() error { return e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "bug"}}) },
		func() error { _, err := e.client.GetIssue(ctx, 1347); return err },
		func() error { _, err := e.client.EditComment(ctx, 1, "x"); return err },
		func() error { e.clock.Advance(400 * time.Millisecond); return nil },
		func() error { return e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "enhancement"}}) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	var at []time.Duration
	for _, r := range e.requests() {
		at = append(at, r.At.Sub(epoch))
	}
	// The GET goes out at once; each mutation waits for the previous + 1 s.
	want := []time.Duration{0, 0, time.Second, 2 * time.Second}
	if !reflect.DeepEqual(at, want) {
		t.Errorf("request times = %v, want %v", at, want)
	}
	if got := e.clock.Sleeps(); !reflect.DeepEqual(got, []time.Duration{time.Second, 600 * time.Millisecond}) {
		t.Errorf("sleeps = %v, want [1s 600ms]", got)
	}
}

func TestDryRunSendsNoMutation(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.DryRun = true; o.BotLogin = "github-actions[bot]" })
	e.handle("GET /repos/octocat/Hello-World/labels", status(200, fixture(t, "labels.json")))
	e.handle("GET "+issuePath, status(200, fixture(t, "issue.json")))
	ctx := context.Background()
	if _, err := e.client.GetIssue(ctx, 1347); err != nil {
		t.Fatalf("reads still go out in dry run: %v", err)
	}
	cm, err := e.client.CreateComment(ctx, 1347, "<!-- autopilot:x -->\nhello")
	if err != nil || cm.Body != "<!-- autopilot:x -->\nhello" || cm.IssueNumber != 1347 || cm.ID >= 0 || cm.Author.Login != "github-actions[bot]" {
		t.Errorf("CreateComment = %+v, %v; want a plausible comment with a fake negative id", cm, err)
	}
	second, _ := e.client.CreateComment(ctx, 1347, "again")
	if second.ID == cm.ID {
		t.Errorf("dry-run ids repeat: %d", cm.ID)
	}
	if ed, err := e.client.EditComment(ctx, 7, "new"); err != nil || ed.ID != 7 || ed.Body != "new" {
		t.Errorf("EditComment = %+v, %v", ed, err)
	}
	calls := []error{
		e.client.React(ctx, 7, "eyes"),
		e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "autopilot"}}),
		e.client.RemoveLabel(ctx, 1347, "autopilot"),
	}
	if id, err := e.client.DispatchWorkflow(ctx, "agent.yml", "main", nil); id != 0 || err != nil {
		t.Errorf("DispatchWorkflow = %d, %v", id, err)
	}
	for i, err := range calls {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	for _, r := range e.requests() {
		if r.Method != http.MethodGet {
			t.Errorf("dry run sent %s %s", r.Method, r.Path)
		}
	}

}

func TestTransportRefusesMutationsInDryRunAsBackstop(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.DryRun = true })
	req, err := e.client.gh.NewRequest(http.MethodDelete, "repos/octocat/Hello-World/labels/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.gh.Do(context.Background(), req, nil); !errors.Is(err, transport.ErrDryRun) {
		t.Errorf("err = %v, want transport.ErrDryRun", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestCancelledContextStopsWaiting(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET "+issuePath, status(502, serverErrorBody))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.client.GetIssue(ctx, 1347)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

func TestTimeoutBoundsEachAttemptNotTheWholeCall(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.HTTPClient = &http.Client{Timeout: 50 * time.Millisecond} })
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}
	e.handle("GET "+issuePath, script(slow, status(200, fixture(t, "issue.json"))))
	if err := getIssue(e); err != nil {
		t.Fatalf("a timed-out attempt should be retried: %v", err)
	}
	if n := len(e.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if st := e.client.Stats(); st.Retries != 1 {
		t.Errorf("Retries = %d, want 1", st.Retries)
	}
}

// TestSharedPacerSpacesClientsOfOneToken: two clients of one token (two
// repositories of an App installation) sharing a Pacer space their
// mutations together; without it each would go out at once.
func TestSharedPacerSpacesClientsOfOneToken(t *testing.T) {
	pacer := transport.NewPacer()
	e := newEnv(t, "", func(o *Options) { o.Pacer = pacer })
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, fixture(t, "labels.json")))
	second, err := New(Options{Repo: testRepo, Token: "t0ken", BaseURL: e.srv.URL, Now: e.clock.Now, Sleep: e.clock.Sleep,
		Rand: func() float64 { return 0.5 }, Pacer: pacer})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range []*Client{e.client, second, e.client} {
		if err := c.AddLabels(ctx, 1347, []forge.Label{{Name: "bug"}}); err != nil {
			t.Fatalf("mutation %d: %v", i, err)
		}
	}
	var at []time.Duration
	for _, r := range e.requests() {
		at = append(at, r.At.Sub(epoch))
	}
	if want := []time.Duration{0, time.Second, 2 * time.Second}; !reflect.DeepEqual(at, want) {
		t.Errorf("mutation times = %v, want %v (one pacer across both clients)", at, want)
	}
}
