package action_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/bot once for the package's end-to-end tests.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "autopilot-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "bot")
		root := filepath.Dir(ghtest.Dir(t)) // testdata/webhooks → testdata
		root = filepath.Dir(root)
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/bot")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

const (
	repo  = "acme/widgets"
	token = "ghs_actions_token"
	key   = "e2e-state-key"
)

type harness struct {
	t   *testing.T
	gh  *fakegithub.Server
	dir string
	n   int
	// last is the result of the newest run; starts holds the index of
	// each run's first request in the fake's log.
	last   result
	starts []int
	// skew moves the fake's clock ahead of the wall clock (nanoseconds),
	// so seeded comments can be spread over days.
	skew *atomic.Int64
}

func newHarness(t *testing.T) *harness {
	skew := new(atomic.Int64)
	gh := fakegithub.New(fakegithub.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	t.Cleanup(gh.Close)
	if err := gh.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	gh.AddActionsToken(token, repo)
	for login, p := range map[string]access.Level{"maria": access.Admin, "devin": access.Write, "reader": access.Read} {
		gh.AddUser(login, "User")
		if err := gh.SetPermission(repo, login, p); err != nil {
			t.Fatal(err)
		}
	}
	return &harness{t: t, gh: gh, dir: t.TempDir(), skew: skew}
}

type result struct {
	code    int
	stdout  string
	outputs map[string]string
	calls   int
}

// run executes the binary once, as the runner does, for one event.
func (h *harness) run(event string, payload []byte, extra ...string) result {
	h.t.Helper()
	h.n++
	evPath := filepath.Join(h.dir, fmt.Sprintf("event-%d.json", h.n))
	out := filepath.Join(h.dir, fmt.Sprintf("output-%d", h.n))
	sum := filepath.Join(h.dir, fmt.Sprintf("summary-%d", h.n))
	if err := os.WriteFile(evPath, payload, 0o644); err != nil {
		h.t.Fatal(err)
	}
	// A world with a workflow job (fakegithub.SetWorkflowJob) runs the
	// binary as that job's step: GITHUB_JOB is set, and the job's own
	// check run is attached as GitHub does.
	job, inJob, err := h.gh.JobStarted(repo, event, payload)
	if err != nil {
		h.t.Fatal(err)
	}
	if inJob {
		extra = append([]string{"GITHUB_JOB=" + job.Job.ID}, extra...)
	}
	before := len(h.gh.Requests())
	h.starts = append(h.starts, before)
	cmd := exec.Command(binary(h.t))
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir,
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_REPOSITORY=" + repo, "GITHUB_API_URL=" + h.gh.URL(),
		"GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + sum,
		"INPUT_GITHUB_TOKEN=" + token, "INPUT_STATE_KEY=" + key, "INPUT_TRIGGER_LABEL=autopilot",
		"INPUT_ANSWER_PERMISSION=write", "INPUT_DRY_RUN=false", "AUTOPILOT_MUTATION_GAP=0s", "AUTOPILOT_CLAIM_SETTLE=50ms",
	}, extra...)
	t0 := time.Now()
	b, err := cmd.CombinedOutput()
	h.t.Logf("run %d %s: %v", h.n, event, time.Since(t0).Round(time.Millisecond))
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	if err := h.gh.JobFinished(repo, job, code); err != nil {
		h.t.Fatal(err)
	}
	// Calls are what the rate limit counts: a 304 answered from the ETag
	// cache is free (GitHub's rule).
	calls := 0
	for _, q := range h.gh.Requests()[before:] {
		if q.Status != 304 {
			calls++
		}
	}
	res := result{code: code, stdout: string(b), outputs: readOutputs(out), calls: calls}
	if os.Getenv("E2E_LOG") != "" {
		for _, q := range h.gh.Requests()[before:] {
			h.t.Logf("    %s %s%s → %d", q.Method, q.Path, q.Query, q.Status)
		}
	}
	if s, err := os.ReadFile(sum); err == nil && len(s) > 1<<20 {
		h.t.Errorf("step summary is %d bytes, over 1 MiB", len(s))
	}
	return res
}

func readOutputs(path string) map[string]string {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m
}

// addLabel labels an issue through the API as maria (a person).
func (h *harness) addLabel(n int, label string) {
	h.t.Helper()
	h.gh.AddToken("ghp_maria", fakegithub.Identity{Login: "maria", Type: "User"})
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/%s/issues/%d/labels", h.gh.URL(), repo, n), strings.NewReader(`{"labels":["`+label+`"]}`))
	req.Header.Set("Authorization", "token ghp_maria")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		h.t.Fatalf("label: %s", resp.Status)
	}
}

func (h *harness) labels(n int) []any {
	return ghtest.Labels(h.gh.Labels(repo, n)...)
}

func (h *harness) labeled(n int, who string) []byte {
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "issues.labeled.json"), repo), map[string]any{
		"issue.number": n, "issue.labels": h.labels(n), "label.name": "autopilot", "sender.login": who, "sender.type": "User",
	})
}

// comment posts a comment on the fake and returns the matching payload.
func (h *harness) comment(n int, who, body string) []byte {
	h.t.Helper()
	c, err := h.gh.AddComment(repo, n, who, body)
	if err != nil {
		h.t.Fatal(err)
	}
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "issue_comment.created.json"), repo), map[string]any{
		"issue.number": n, "issue.labels": h.labels(n), "issue.pull_request": ghtest.Delete,
		"comment.id": c.ID, "comment.body": body, "comment.user.login": who, "comment.user.type": "User",
		"comment.created_at": c.CreatedAt.UTC().Format(time.RFC3339), "comment.performed_via_github_app": nil,
		"sender.login": who, "sender.type": "User",
	})
}

func (h *harness) state(n int) *state.State {
	h.t.Helper()
	var best *state.State
	for _, c := range h.gh.Comments(repo, n) {
		if c.Author.Login != fakegithub.ActionsBotLogin || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		s, err := codec.Parse(c.Body, codec.Want{Repo: repo, Issue: n, Key: []byte(key)})
		if err != nil {
			h.t.Fatalf("state comment does not parse: %v", err)
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	return best
}

func (h *harness) mustOK(r result, what string) {
	h.t.Helper()
	if r.code != 0 {
		h.t.Fatalf("%s: exit %d\n%s", what, r.code, r.stdout)
	}
}

// TestActionEndToEnd drives a greenfield issue from the label to done, one
// binary run per event, with nothing kept between runs but the fake GitHub.
func TestActionEndToEnd(t *testing.T) {
	h := newHarness(t)
	n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "Users want CSV.", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n  enabled: false\n")); err != nil {
		t.Fatal(err)
	}
	// Irrelevant: a comment on the issue before it is labelled: 0 calls.
	r := h.run("issue_comment", h.comment(n, "devin", "looks useful"))
	h.mustOK(r, "unlabelled comment")
	if r.calls != 0 {
		t.Fatalf("comment on an unmanaged issue made %d API calls, want 0", r.calls)
	}

	h.addLabel(n, "autopilot")
	r = h.run("issues", h.labeled(n, "maria"))
	h.mustOK(r, "start")
	t.Logf("starting the first run in a repository (creates its labels once): %d API calls", r.calls)
	if r.outputs["step"] != "problem" || r.outputs["status"] != "in-progress" || r.outputs["issue"] != fmt.Sprint(n) {
		t.Fatalf("outputs after start = %v\n%s", r.outputs, r.stdout)
	}
	// Steady state: a second issue in the same repository.
	n2, _ := h.gh.CreateIssue(repo, "maria", "Second", "", nil)
	h.addLabel(n2, "autopilot")
	r = h.run("issues", h.labeled(n2, "maria"))
	h.mustOK(r, "start second")
	startCalls := r.calls

	steps := []string{"problem", "research", "plan"}
	for _, s := range steps {
		r = h.run("issue_comment", h.comment(n, "devin", "/autopilot done "+s+" finished"))
		h.mustOK(r, "done "+s)
	}
	// A reader's answer is refused; the status command is cheap.
	r = h.run("issue_comment", h.comment(n, "devin", "/autopilot status"))
	h.mustOK(r, "status")
	statusCalls := r.calls
	r = h.run("issue_comment", h.comment(n, "devin", "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"))
	h.mustOK(r, "decompose")
	st := h.state(n)
	if st.Gate == nil || st.Gate.Kind != "session-boundary" || st.Run != state.RunAwaitingDecision {
		t.Fatalf("after decompose: gate %+v run %s", st.Gate, st.Run)
	}
	r = h.run("issue_comment", h.comment(n, "reader", "A"))
	h.mustOK(r, "reader answer")
	if h.state(n).Gate == nil {
		t.Fatal("a reader's answer was applied")
	}
	r = h.run("issue_comment", h.comment(n, "maria", "A"))
	h.mustOK(r, "gate answer")
	gateCalls := r.calls
	if r.outputs["decision"] != "A" || r.outputs["step"] != "implement" {
		t.Fatalf("outputs after answer = %v", r.outputs)
	}
	for _, s := range []string{"implement", "run-tests", "security-audit", "deploy"} {
		r = h.run("issue_comment", h.comment(n, "devin", "/autopilot done "+s+" finished"))
		h.mustOK(r, "done "+s)
	}
	st = h.state(n)
	if st.Run != state.RunDone || st.Slug != "done" {
		t.Fatalf("final run %s slug %s", st.Run, st.Slug)
	}
	labels := strings.Join(h.gh.Labels(repo, n), ",")
	for _, want := range []string{"autopilot", "autopilot/status:done", "autopilot/step:done", "autopilot/flow:greenfield"} {
		if !strings.Contains(labels, want) {
			t.Errorf("labels %s lack %s", labels, want)
		}
	}
	if strings.Count(labels, "autopilot/status:") != 1 || strings.Count(labels, "autopilot/step:") != 1 {
		t.Errorf("labels %s: want exactly one status and one step label", labels)
	}
	t.Logf("API calls: start %d, gate answer %d, status %d", startCalls, gateCalls, statusCalls)
	if startCalls > 8 || gateCalls > 6 || statusCalls > 6 {
		t.Errorf("API calls over budget: start %d, gate answer %d, status %d", startCalls, gateCalls, statusCalls)
	}
}
