package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

var now = statetest.At("2026-11-22T16:11:00Z")

// fill puts the rows of the passes into a memory store.
func fill(t *testing.T, passes ...model.Pass) *store.Memory {
	t.Helper()
	m := store.NewMemory()
	for _, p := range passes {
		store.Updater{Store: m}.Passed(context.Background(), p)
	}
	return m
}

func newDash(t *testing.T, o Options) *Dashboard {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return now }
	}
	o.Logger = slog.New(slog.DiscardHandler)
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// samplePass is statetest.Sample awaiting a decision, edited by edit.
func samplePass(edit func(s *state.State)) model.Pass {
	s := statetest.Sample()
	s.Run = state.RunAwaitingDecision
	if edit != nil {
		edit(s)
	}
	return model.Pass{Installation: 77, Repo: s.Repo, Issue: s.Issue, State: s, Listed: true}
}

func TestListShowsWhatEachIssueWaitsForFromWhomAndHowLong(t *testing.T) {
	d := newDash(t, Options{Store: fill(t,
		samplePass(func(s *state.State) { s.Decisions[0].By = "octocat" }),
		samplePass(func(s *state.State) {
			s.Issue, s.Title, s.Run, s.Gate = 13, "Stopped one", state.RunStopped, nil
			s.Stop = &state.Stop{Reason: "max-hours-exceeded", Hint: "raise limits.max_hours"}
		}),
		samplePass(func(s *state.State) { s.Repo, s.Title = "octo-org/other", "Elsewhere" }),
	)})
	code, body := get(t, d, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d: %s", code, body)
	}
	for _, want := range []string{"3</b> of 3 open issues", "DECISION REQUIRED: accept the plan?", "@octocat", "anyone with write access",
		">2h 00m<", "max-hours-exceeded: raise limits.max_hours", "installation 77", "octo-org/other", `href="/issues/octo-org/hello-world/12"`} {
		if !strings.Contains(body, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	_, body = get(t, d, "/?status=stopped")
	if !strings.Contains(body, "1</b> of 3") || strings.Contains(body, "Elsewhere") {
		t.Errorf("status filter: %s", between(body, "<p class=\"sum\">", "</p>"))
	}
	_, body = get(t, d, "/?repo=octo-org/other")
	if !strings.Contains(body, "1</b> of 3") || !strings.Contains(body, "Elsewhere") {
		t.Errorf("repo filter: %s", between(body, "<p class=\"sum\">", "</p>"))
	}
	_, body = get(t, d, "/?login=@octocat")
	if !strings.Contains(body, "2</b> of 3") {
		t.Errorf("waiting for octocat: %s", between(body, "<p class=\"sum\">", "</p>"))
	}
	_, body = get(t, d, "/?login=nobody")
	if !strings.Contains(body, "0</b> of 3") {
		t.Errorf("waiting for nobody: %s", between(body, "<p class=\"sum\">", "</p>"))
	}
}

func between(s, a, b string) string {
	_, after, _ := strings.Cut(s, a)
	before, _, _ := strings.Cut(after, b)
	return before
}

func TestIssuePageDrawsTheTimeline(t *testing.T) {
	d := newDash(t, Options{Store: fill(t, samplePass(nil))})
	code, body := get(t, d, "/issues/octo-org/hello-world/12")
	if code != http.StatusOK {
		t.Fatalf("GET issue = %d: %s", code, body)
	}
	if n := strings.Count(body, "<circle"); n != 5 {
		t.Errorf("%d dots, want 5 (2 steps, a decision, a retry, the open gate)", n)
	}
	for _, want := range []string{"<svg", `href="https://github.com/octo-org/hello-world/issues/12#issuecomment-1001"`, "for 2h 00m"} {
		if !strings.Contains(body, want) {
			t.Errorf("issue page lacks %q", want)
		}
	}
	if code, _ := get(t, d, "/issues/octo-org/hello-world/99"); code != http.StatusNotFound {
		t.Errorf("unknown issue = %d, want 404", code)
	}
	if code, _ := get(t, d, "/issues/octo-org/hello-world/x"); code != http.StatusBadRequest {
		t.Errorf("bad number = %d, want 400", code)
	}
}

// hostile are strings that would run script or break out of their place
// if rendered unescaped.
var hostile = []string{
	`<script>window.__pwned=1</script>`,
	`"><img src=x onerror="window.__pwned=1">`,
	`</text><script>window.__pwned=1</script><text>`,
	`' onmouseover='window.__pwned=1`,
}

func TestEveryUserControlledStringIsEscaped(t *testing.T) {
	h := strings.Join(hostile, " ")
	d := newDash(t, Options{Store: fill(t, samplePass(func(s *state.State) {
		s.Title, s.Name, s.Slug, s.Flow = "title "+h, "step "+h, "slug"+h, "flow"+h
		s.Gate.Title, s.Gate.Details = "gate "+h, []string{"@mallory"}
		s.Decisions[0].By = `"><svg onload=window.__pwned=1>`
		s.Decisions[0].Link = "javascript:window.__pwned=1"
		s.Decisions[0].OptionText = h
		s.Completed[0].Name = "</title></svg><script>window.__pwned=1</script>"
		s.Completed[0].Outcome = h
		s.RetryLog[0].Reason = h
		s.Tasks[2].Title, s.Tasks[2].Error = h, h
		s.TrackerNote = h
		s.Stop = &state.Stop{Reason: state.StopReason(h), Hint: h}
	}))})
	for _, path := range []string{"/", "/issues/octo-org/hello-world/12", "/?login=" + urlQueryEscape(`"><script>x</script>`)} {
		code, body := get(t, d, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, code)
		}
		for _, bad := range []string{"<script", "<img", "onerror=\"", "javascript:", "' onmouseover='", "<svg onload"} {
			if strings.Contains(strings.ToLower(body), strings.ToLower(bad)) {
				i := strings.Index(strings.ToLower(body), strings.ToLower(bad))
				t.Errorf("GET %s renders %q raw: …%s…", path, bad, body[max(0, i-80):min(len(body), i+80)])
			}
		}
	}
	_, body := get(t, d, "/issues/octo-org/hello-world/12")
	if !strings.Contains(body, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") || !strings.Contains(body, `href="#ZgotmplZ"`) {
		t.Error("the hostile title is not shown escaped, or the javascript: link was not neutralised")
	}
}

func TestHealthShowsWhatIsMeasuredAndSaysWhatIsNot(t *testing.T) {
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGauge(prometheus.GaugeOpts{Name: "autopilot_queue_depth", Help: "h"})
	deliveries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "autopilot_webhook_deliveries_total", Help: "h"}, []string{"event", "outcome"})
	rate := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "autopilot_github_rate_limit_remaining", Help: "h"}, []string{"installation"})
	reg.MustRegister(depth, deliveries, rate)
	depth.Set(4)
	rate.WithLabelValues("77").Set(4321)
	deliveries.WithLabelValues("issues", "accepted").Add(10)
	clock := now
	errs := NewErrorLog(5)
	log := slog.New(errs.Handler(slog.DiscardHandler))
	log.Error("job failed", "repo", "octo-org/x", "err", "<b>boom</b>")
	log.Warn("just a warning")
	d := newDash(t, Options{Store: store.NewMemory(), Health: &Health{Metrics: reg, Errors: errs}, Now: func() time.Time { return clock }})
	_, body := get(t, d, "/health")
	for _, want := range []string{"<th>queue length</th><td>4</td>", "<td>77</td><td>4321</td>", "not measured", "job failed", "&lt;b&gt;boom&lt;/b&gt;", "10 since start"} {
		if !strings.Contains(body, want) {
			t.Errorf("health lacks %q", want)
		}
	}
	if strings.Contains(body, "just a warning") {
		t.Error("a warning without an error was kept as an error")
	}
	clock = clock.Add(time.Minute)
	deliveries.WithLabelValues("issues", "accepted").Add(30)
	_, body = get(t, d, "/health")
	if !strings.Contains(body, "<th>deliveries per minute</th><td>30.0</td>") {
		t.Errorf("rate: %s", between(body, "deliveries per minute", "</tr>"))
	}
	_, body = get(t, newDash(t, Options{Store: store.NewMemory()}), "/health")
	if strings.Count(body, "not measured") < 8 {
		t.Errorf("without metrics every figure should say not measured:\n%s", body)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 45 * time.Second: "45s", 12 * time.Minute: "12m",
		3*time.Hour + 5*time.Minute: "3h 05m", 52 * time.Hour: "2d 4h"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %q, want %q", d, got, want)
		}
	}
}

// BenchmarkListThousandIssues renders the list page over 1,000 rows.
func BenchmarkListThousandIssues(b *testing.B) {
	m := store.NewMemory()
	for i := 1; i <= 1000; i++ {
		p := samplePass(func(s *state.State) { s.Issue, s.Repo = i, fmt.Sprintf("octo-org/repo-%d", i%20) })
		store.Updater{Store: m}.Passed(context.Background(), p)
	}
	d, _ := New(Options{Store: m, Now: func() time.Time { return now }})
	for b.Loop() {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	}
}
