package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The end-to-end tests of `bot serve` start the real binary against the
// fake GitHub (apptest), as an operator would run it, and talk to it only
// over HTTP: signed deliveries in, the fake's state and /metrics out.

const hookPath = settings.DefaultWebhookPath

var (
	serveBuild    sync.Once
	serveBinPath  string
	serveBuildErr error
)

// serveBinary builds cmd/bot once for these tests.
func serveBinary(t *testing.T) string {
	t.Helper()
	serveBuild.Do(func() {
		dir, err := os.MkdirTemp("", "autopilot-serve-e2e-")
		if err != nil {
			serveBuildErr = err
			return
		}
		serveBinPath = filepath.Join(dir, "bot")
		cmd := exec.Command("go", "build", "-o", serveBinPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			serveBuildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if serveBuildErr != nil {
		t.Fatal(serveBuildErr)
	}
	return serveBinPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if serveBinPath != "" {
		os.RemoveAll(filepath.Dir(serveBinPath))
	}
	os.Exit(code)
}

// lockedBuffer collects a process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// replica is one running `bot serve` process.
type replica struct {
	t      *testing.T
	name   string
	url    string
	admin  string // ADMIN_ADDR's URL: /metrics
	cmd    *exec.Cmd
	logs   *lockedBuffer
	exited chan struct{}
	code   int
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// baseEnv is the environment of a replica against g, key given as a file.
func baseEnv(t *testing.T, g *apptest.GitHub) map[string]string {
	t.Helper()
	keyPath := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyPath, g.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"WEBHOOK_SECRET": apptest.Secret, "APP_ID": strconv.Itoa(apptest.AppID), "PRIVATE_KEY_PATH": keyPath,
		"GITHUB_API_URL": g.URL, "HOST": "127.0.0.1", "PORT": strconv.Itoa(freePort(t)),
		"ADMIN_ADDR": "127.0.0.1:" + strconv.Itoa(freePort(t)), "SWEEP_INTERVAL": "0", "SHUTDOWN_TIMEOUT": "20s",
		"AUTOPILOT_STATE_KEY": apptest.StateKey, "AUTOPILOT_MUTATION_GAP": "0s",
	}
}

// startReplica starts the binary with env and args and waits for /readyz.
// The replica's port is the flag --port when given, else env PORT.
func startReplica(t *testing.T, name string, env map[string]string, args ...string) *replica {
	t.Helper()
	port := env["PORT"]
	for i, a := range args {
		if a == "--port" && i+1 < len(args) {
			port = args[i+1]
		}
	}
	cmd := exec.Command(serveBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	r := &replica{t: t, name: name, url: "http://127.0.0.1:" + port, admin: "http://" + env["ADMIN_ADDR"], cmd: cmd, logs: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
		if err != nil && r.code == 0 {
			r.code = -1
		}
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() || os.Getenv("E2E_LOG") != "" {
			t.Logf("%s logs:\n%s", name, r.logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := r.get("/readyz"); code == http.StatusOK {
			return r
		}
		select {
		case <-r.exited:
			t.Fatalf("%s exited with %d before it was ready:\n%s", name, r.code, r.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30s:\n%s", name, r.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get fetches path from the webhook port; code 0 when the server does not
// answer.
func (r *replica) get(path string) (int, string) { return r.getFrom(r.url, path) }

// getFrom fetches path from base (the webhook port or the admin address).
func (r *replica) getFrom(base, path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a delivery signed with the App's secret.
func (r *replica) post(d apptest.Delivery) int {
	r.t.Helper()
	return d.Post(r.t, r.url+hookPath, apptest.Secret)
}

// mustAccept posts d and fails unless it is queued (202).
func (r *replica) mustAccept(d apptest.Delivery) {
	r.t.Helper()
	if code := r.post(d); code != http.StatusAccepted {
		r.t.Fatalf("%s: %s delivery answered %d, want 202", r.name, d.Event, code)
	}
}

// metric returns the value of the /metrics sample line that starts with
// series (name and labels exactly), or -1 when absent.
func (r *replica) metric(series string) float64 {
	r.t.Helper()
	_, body := r.getFrom(r.admin, "/metrics")
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				r.t.Fatalf("metric %s: %v", l, err)
			}
			return f
		}
	}
	return -1
}

// idle waits until nothing is queued or running, seen twice 50ms apart (a
// job between the queue and the in-flight gauge would look idle once).
func (r *replica) idle() {
	r.t.Helper()
	quiet := func() bool {
		return r.metric("autopilot_queue_depth") == 0 && r.metric("autopilot_jobs_in_flight") == 0
	}
	waitFor(r.t, r.name+" idle", func() bool {
		if !quiet() {
			return false
		}
		time.Sleep(50 * time.Millisecond)
		return quiet()
	})
}

// terminate sends SIGTERM and returns the exit code.
func (r *replica) terminate() int {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		r.t.Fatal(err)
	}
	select {
	case <-r.exited:
		return r.code
	case <-time.After(60 * time.Second):
		r.t.Fatalf("%s did not exit within 60s of SIGTERM", r.name)
		return -1
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStep waits until issue n's state is at step slug.
func waitStep(t *testing.T, g *apptest.GitHub, n int, slug string) *state.State {
	t.Helper()
	var st *state.State
	waitFor(t, fmt.Sprintf("#%d at step %s", n, slug), func() bool {
		st = g.State(apptest.Repo, n)
		return st != nil && st.Slug == slug
	})
	return st
}

// commentIDOf returns the comment id a delivery carries.
func commentIDOf(t *testing.T, d apptest.Delivery) int64 {
	t.Helper()
	var p struct {
		Comment struct {
			ID int64 `json:"id"`
		} `json:"comment"`
	}
	if err := json.Unmarshal(d.Body, &p); err != nil || p.Comment.ID == 0 {
		t.Fatalf("no comment id in the delivery: %v", err)
	}
	return p.Comment.ID
}

// toDecomposition drives issue n from the label to the session-boundary
// gate, sending each delivery to the replica send picks.
func toDecomposition(t *testing.T, g *apptest.GitHub, n int, send func(i int, d apptest.Delivery)) {
	t.Helper()
	send(0, g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitStep(t, g, n, "problem")
	for i, s := range []string{"problem", "research", "plan"} {
		send(i+1, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done "+s+" finished"))
		next := map[string]string{"problem": "research", "research": "plan", "plan": "decompose"}[s]
		waitStep(t, g, n, next)
	}
	send(4, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"))
	waitFor(t, "the session-boundary gate", func() bool {
		st := g.State(apptest.Repo, n)
		return st.Gate != nil && st.Gate.Kind == "session-boundary"
	})
}

// TestServeEndToEnd runs the binary (key from PRIVATE_KEY_PATH, PORT from
// the environment) through a whole run with signed deliveries: the label
// starts it as the App's bot, a writer's commands advance it, a stranger's
// answer is refused, a maintainer's answer passes the session boundary;
// then bad deliveries get PRODUCT §11's answers with no API call, and
// SIGTERM drains the work in flight and exits 0.
func TestServeEndToEnd(t *testing.T) {
	g := apptest.New(t)
	r := startReplica(t, "serve", baseEnv(t, g))
	if code, body := r.get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz = %d %s", code, body)
	}
	// The webhook port serves what GitHub needs; /metrics is on ADMIN_ADDR.
	if code, _ := r.get("/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics on the webhook port = %d, want 404", code)
	}
	if code, body := r.getFrom(r.admin, "/metrics"); code != http.StatusOK || !strings.Contains(body, "autopilot_") {
		t.Errorf("/metrics on ADMIN_ADDR = %d %.80q", code, body)
	}
	n := g.Issue(apptest.Repo, "Add CSV export")
	toDecomposition(t, g, n, func(_ int, d apptest.Delivery) { r.mustAccept(d) })

	states := g.States(apptest.Repo, n)
	if len(states) != 1 {
		t.Fatalf("%d state comments by %s with App id %d, want 1", len(states), apptest.BotLogin, apptest.AppID)
	}
	// Labels are written after the state, so they may trail it a moment.
	waitFor(t, "the gate's labels", func() bool {
		for _, l := range []string{"autopilot", "autopilot/step:implement", "autopilot/status:awaiting-decision", "autopilot/flow:greenfield"} {
			if !g.HasLabel(apptest.Repo, n, l) {
				return false
			}
		}
		return true
	})

	// The dashboard on ADMIN_ADDR shows the run from the read model the
	// passes fed (never the webhook port).
	waitFor(t, "the dashboard's row", func() bool {
		code, body := r.getFrom(r.admin, "/?status=awaiting-decision")
		return code == http.StatusOK && strings.Contains(body, fmt.Sprintf(">#%d</a>", n)) && strings.Contains(body, "1</b> of 1 open issues")
	})
	if code, _ := r.get("/"); code != http.StatusNotFound {
		t.Errorf("the webhook port answered / with %d, want 404 (the dashboard is on ADMIN_ADDR only)", code)
	}
	// /metrics reads the same read model: one decision, waiting under an hour.
	if got := r.metric(`autopilot_decisions_waiting{age="under_1h"}`); got != 1 {
		t.Errorf(`autopilot_decisions_waiting{age="under_1h"} = %v while the gate is open, want 1`, got)
	}

	stranger := g.Say(apptest.Repo, n, apptest.Stranger, "A")
	r.mustAccept(stranger)
	sid := commentIDOf(t, stranger)
	waitFor(t, "the stranger's refusal: 😕 and a reply", func() bool {
		return g.RepliesTo(apptest.Repo, n, sid) == 1 && g.Reacted(sid, "confused")
	})
	if st := g.State(apptest.Repo, n); st.Gate == nil || len(st.Decisions) != 0 {
		t.Fatalf("the stranger's answer was applied: gate %+v decisions %+v", st.Gate, st.Decisions)
	}

	answer := g.Say(apptest.Repo, n, apptest.Maintainer, "A")
	r.mustAccept(answer)
	var st *state.State
	waitFor(t, "the maintainer's answer", func() bool {
		st = g.State(apptest.Repo, n)
		return st.Gate == nil
	})
	if st.Slug != "implement" || len(st.Decisions) != 1 || st.Decisions[0].Option != "A" || st.Decisions[0].By != apptest.Maintainer {
		t.Fatalf("after the maintainer's A: step %s, decisions %+v", st.Slug, st.Decisions)
	}
	if st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].Option != "A" || st.Decisions[0].By != apptest.Maintainer {
		t.Fatalf("after the maintainer's A: gate %+v decisions %+v", st.Gate, st.Decisions)
	}
	if code := r.post(answer); code != http.StatusOK {
		t.Errorf("the same delivery again answered %d, want 200 (duplicate)", code)
	}
	if len(g.States(apptest.Repo, n)) != 1 {
		t.Errorf("%d state comments after the run, want 1 edited in place", len(g.States(apptest.Repo, n)))
	}
	r.idle()
	for series, want := range map[string]float64{
		`autopilot_webhook_deliveries_total{event="issues",outcome="accepted"}`:                                       1,
		`autopilot_webhook_deliveries_total{event="issue_comment",outcome="accepted"}`:                                6,
		`autopilot_webhook_deliveries_total{event="issue_comment",outcome="duplicate"}`:                               1,
		`autopilot_jobs_total{event="issue_comment",outcome="ok"}`:                                                    6,
		fmt.Sprintf(`autopilot_github_api_calls_total{installation="%d"}`, apptest.Installation):                      -2, // present
		`autopilot_job_duration_seconds_count{event="issue_comment",outcome="ok"}`:                                    6,
		`autopilot_github_requests_total{status="2xx"}`:                                                               -2,
		`autopilot_queue_wait_seconds_count`:                                                                          -2,
		`autopilot_decisions_waiting{age="under_1h"}`:                                                                 0,
		`autopilot_tracker_backlog`:                                                                                   -2, // the decomposition's tasks wait for the tracker
		fmt.Sprintf(`autopilot_github_rate_limit_remaining{installation="%d",resource="core"}`, apptest.Installation): -2,
	} {
		got := r.metric(series)
		if (want == -2 && got <= 0) || (want >= 0 && got != want) {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}

	badDeliveries(t, g, r, n)
	drainOnSIGTERM(t, g, r, n)
}

// badDeliveries sends what PRODUCT §11 refuses or ignores, and checks each
// answer and that the App made no API call for any of them.
func badDeliveries(t *testing.T, g *apptest.GitHub, r *replica, n int) {
	t.Helper()
	r.idle()
	status := g.Say(apptest.Repo, n, apptest.Writer, "/autopilot status") // not delivered yet
	sign := func(req *http.Request, body []byte) {
		req.Header.Set("X-Hub-Signature-256", server.Sign([]byte(apptest.Secret), body))
	}
	withBody := func(req *http.Request, body []byte) {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, status.Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	huge := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 26<<20)...)
	huge = append(huge, `"}`...)
	other := func(file string) apptest.Delivery {
		return apptest.Delivery{Event: ghtest.EventName(file), ID: apptest.NewDeliveryID(), Body: ghtest.Payload(t, file)}
	}
	ownBot := g.Say(apptest.Repo, n, apptest.BotLogin, "<!-- autopilot:notice e2e -->\nA")
	cases := []struct {
		name string
		d    apptest.Delivery
		edit func(*http.Request)
		want int
	}{
		{"unsigned", status, func(q *http.Request) { q.Header.Del("X-Hub-Signature-256") }, 401},
		{"wrong secret", status, func(q *http.Request) {
			q.Header.Set("X-Hub-Signature-256", server.Sign([]byte("not-the-secret"), status.Body))
		}, 401},
		{"sha1 only", status, func(q *http.Request) {
			q.Header.Del("X-Hub-Signature-256")
			m := hmac.New(sha1.New, []byte(apptest.Secret))
			m.Write(status.Body)
			q.Header.Set("X-Hub-Signature", "sha1="+hex.EncodeToString(m.Sum(nil)))
		}, 401},
		{"re-serialised JSON", status, func(q *http.Request) { withBody(q, pretty.Bytes()) }, 401},
		{"truncated JSON", status, func(q *http.Request) {
			cut := status.Body[:len(status.Body)/2]
			withBody(q, cut)
			sign(q, cut)
		}, 400},
		{"wrong content type", status, func(q *http.Request) {
			form := []byte("payload=" + url.QueryEscape(string(status.Body)))
			withBody(q, form)
			sign(q, form)
			q.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}, 400},
		{"oversized", status, func(q *http.Request) {
			withBody(q, huge)
			sign(q, huge)
		}, 413},
		{"unknown event", other("star.created.json"), nil, 200},
		{"ping", other("ping.json"), nil, 200},
		{"sent by the App's own bot", ownBot, nil, 200},
	}
	before := len(g.Requests())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.d
			d.ID = apptest.NewDeliveryID()
			req := d.Request(t, r.url+hookPath, apptest.Secret)
			if c.edit != nil {
				c.edit(req)
			}
			if code := apptest.Send(t, req); code != c.want {
				t.Fatalf("answered %d, want %d", code, c.want)
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	r.idle()
	if q := g.AppRequests(before); len(q) != 0 {
		t.Fatalf("bad or ignored deliveries made %d API calls: %+v", len(q), q)
	}
	for series, want := range map[string]float64{
		`autopilot_webhook_deliveries_total{event="unverified",outcome="unauthorized"}`:   4,
		`autopilot_webhook_deliveries_total{event="unverified",outcome="too_large"}`:      1,
		`autopilot_webhook_deliveries_total{event="issue_comment",outcome="bad_request"}`: 2,
		`autopilot_webhook_deliveries_total{event="issue_comment",outcome="own_bot"}`:     1,
		`autopilot_webhook_deliveries_total{event="other",outcome="ignored"}`:             1,
		`autopilot_webhook_deliveries_total{event="ping",outcome="ping"}`:                 1,
	} {
		if got := r.metric(series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// The same comment, properly delivered, is a command: the control.
	r.mustAccept(status)
	waitFor(t, "the status reply", func() bool { return g.RepliesTo(apptest.Repo, n, commentIDOf(t, status)) == 1 })
}

// drainOnSIGTERM: with a job in flight on a slow GitHub, SIGTERM makes
// /readyz fail, the job finishes (its writes land after the signal), and
// the process exits 0.
func drainOnSIGTERM(t *testing.T, g *apptest.GitHub, r *replica, n int) {
	t.Helper()
	r.idle()
	g.SetLatency(150 * time.Millisecond)
	defer g.SetLatency(0)
	r.mustAccept(g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done implement finished"))
	waitFor(t, "the job in flight", func() bool { return r.metric("autopilot_jobs_in_flight") == 1 })
	signalled := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz to fail", func() bool { code, _ := r.get("/readyz"); return code != http.StatusOK })
	select {
	case <-r.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("no exit within 60s of SIGTERM")
	}
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0", r.code)
	}
	g.SetLatency(0)
	if st := g.State(apptest.Repo, n); st.Slug != "run-tests" {
		t.Fatalf("the job in flight at SIGTERM did not finish: step %s", st.Slug)
	}
	late := 0
	for _, q := range g.AppRequests(0) {
		if q.IsMutation() && q.Time.After(signalled) {
			late++
		}
	}
	if late == 0 {
		t.Error("no App write landed after SIGTERM: the job was not in flight when the drain began")
	}
	if !strings.Contains(r.logs.String(), `"msg":"server stopped"`) {
		t.Error("no 'server stopped' log line")
	}
}

// TestServeInlineKeyAndFlagsOverrideEnv: the key inline in PRIVATE_KEY (on
// one line with literal \n, as env files carry it) and --port overriding a
// PORT that would not work; the labelled issue starts.
func TestServeInlineKeyAndFlagsOverrideEnv(t *testing.T) {
	g := apptest.New(t)
	env := baseEnv(t, g)
	delete(env, "PRIVATE_KEY_PATH")
	env["PRIVATE_KEY"] = strings.ReplaceAll(strings.TrimSpace(string(g.KeyPEM)), "\n", `\n`)
	env["PORT"] = "1" // privileged: listening there would fail
	r := startReplica(t, "inline", env, "--port", strconv.Itoa(freePort(t)))
	n := g.Issue(apptest.Repo, "Inline key")
	r.mustAccept(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitStep(t, g, n, "problem")
	if code := r.terminate(); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

// toBoth posts d to every replica at once and returns the status codes in
// replica order.
func toBoth(t *testing.T, rs []*replica, d apptest.Delivery) []int {
	t.Helper()
	codes := make([]int, len(rs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range rs {
		req := d.Request(t, r.url+hookPath, apptest.Secret)
		wg.Go(func() {
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s: %v", r.name, err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	close(start)
	wg.Wait()
	return codes
}

// acceptedOnce checks that exactly one replica queued the delivery and the
// other answered it as a duplicate.
func acceptedOnce(t *testing.T, what string, codes []int) {
	t.Helper()
	accepted, dup := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusOK:
			dup++
		}
	}
	if accepted != 1 || dup != len(codes)-1 {
		t.Fatalf("%s: answers %v, want one 202 and the rest 200 (duplicate)", what, codes)
	}
}

// TestServeTwoReplicasOnOneRedis runs two `bot serve` processes sharing one
// Redis and the fake GitHub. Every delivery goes to both at once: exactly
// one queues it. Re-emitted events (new delivery ids) are processed by both
// under the per-issue lease and change nothing. At the gate, two
// maintainers' conflicting answers and a stranger's answer arrive at both
// replicas together: one decision is applied, once; the loser and the
// stranger get one reply each.
func TestServeTwoReplicasOnOneRedis(t *testing.T) {
	servertest.RedisURL(t)
	g := apptest.New(t)
	var rs []*replica
	prefix := fmt.Sprintf("autopilot-e2e-two-%d:", time.Now().UnixNano())
	for _, name := range []string{"replica-a", "replica-b"} {
		env := baseEnv(t, g)
		redisEnv(t, env, prefix)
		env["LOCK_TTL"] = "5s" // a crashed earlier run frees its leases soon
		env["WORKERS"] = "4"
		rs = append(rs, startReplica(t, name, env))
	}
	n := g.Issue(apptest.Repo, "Replicated")
	label := g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot")
	acceptedOnce(t, "label", toBoth(t, rs, label))
	waitStep(t, g, n, "problem")
	// The same event re-emitted under new ids, one to each replica at once.
	again := []apptest.Delivery{label, label}
	again[0].ID, again[1].ID = apptest.NewDeliveryID(), apptest.NewDeliveryID()
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			if code := r.post(again[i]); code != http.StatusAccepted {
				t.Errorf("%s: re-emitted label answered %d", r.name, code)
			}
		})
	}
	wg.Wait()
	for _, r := range rs {
		r.idle()
	}
	if k := len(g.States(apptest.Repo, n)); k != 1 {
		t.Fatalf("%d state comments after three label deliveries, want 1", k)
	}
	if st := g.State(apptest.Repo, n); st.Version != 1 {
		t.Errorf("state version %d after re-emitted labels, want 1 (nothing new to write)", st.Version)
	}

	for i, s := range []string{"problem", "research", "plan"} {
		d := g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done "+s)
		acceptedOnce(t, s, toBoth(t, rs, d))
		waitStep(t, g, n, []string{"research", "plan", "decompose"}[i])
	}
	d := g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n```")
	acceptedOnce(t, "decompose", toBoth(t, rs, d))
	waitFor(t, "the session-boundary gate", func() bool {
		st := g.State(apptest.Repo, n)
		return st.Gate != nil && st.Gate.Kind == "session-boundary"
	})

	answers := []apptest.Delivery{
		g.Say(apptest.Repo, n, apptest.Maintainer, "A"),
		g.Say(apptest.Repo, n, apptest.Writer, "B"),
		g.Say(apptest.Repo, n, apptest.Stranger, "A"),
	}
	codes := make([][]int, len(answers))
	for i, d := range answers {
		wg.Go(func() { codes[i] = toBoth(t, rs, d) })
	}
	wg.Wait()
	for i, c := range codes {
		acceptedOnce(t, fmt.Sprint("answer ", i), c)
	}
	// And the same answers re-emitted under new ids, to both.
	for _, d := range answers {
		d.ID = apptest.NewDeliveryID()
		acceptedOnce(t, "re-emitted answer", toBoth(t, rs, d))
	}
	for _, r := range rs {
		r.idle()
	}
	st := g.State(apptest.Repo, n)
	if st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].By != apptest.Maintainer || st.Decisions[0].Option != "A" {
		t.Fatalf("gate %+v, decisions %+v; want exactly maria's A applied", st.Gate, st.Decisions)
	}
	if k := len(g.States(apptest.Repo, n)); k != 1 {
		t.Errorf("%d state comments, want 1", k)
	}
	for _, c := range []struct {
		who     string
		d       apptest.Delivery
		replies int
	}{{"maintainer (applied)", answers[0], 0}, {"writer (too late)", answers[1], 1}, {"stranger (refused)", answers[2], 1}} {
		if got := g.RepliesTo(apptest.Repo, n, commentIDOf(t, c.d)); got != c.replies {
			t.Errorf("%s: %d replies, want %d", c.who, got, c.replies)
		}
	}
	if k := g.BotComments(apptest.Repo, n, "<!-- autopilot:gate "); k != 1 {
		t.Errorf("the gate was posted %d times, want once", k)
	}
	jobs := 0.0
	for _, r := range rs {
		jobs += r.metric(`autopilot_jobs_total{event="issue_comment",outcome="ok"}`)
	}
	if jobs != 4+2*3 {
		t.Errorf("%v comment jobs ran across the replicas, want 10 (each accepted delivery once)", jobs)
	}
	for _, r := range rs {
		if code := r.terminate(); code != 0 {
			t.Errorf("%s: exit %d after SIGTERM", r.name, code)
		}
	}
}

// TestServeSweepCatchesUpMissedDeliveries: a command whose delivery never
// arrived is applied by the sweep a replica runs at start, through the
// installation's repository list.
func TestServeSweepCatchesUpMissedDeliveries(t *testing.T) {
	g := apptest.New(t)
	first := startReplica(t, "first", baseEnv(t, g))
	n := g.Issue(apptest.Repo, "Missed")
	first.mustAccept(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitStep(t, g, n, "problem")
	if code := first.terminate(); code != 0 {
		t.Fatalf("first replica exit %d", code)
	}
	g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done problem") // delivery lost

	env := baseEnv(t, g)
	env["GITHUB_API_URL"] = g.SweepURL
	env["SWEEP_INTERVAL"] = "1h" // once at start, then hourly
	second := startReplica(t, "second", env)
	waitStep(t, g, n, "research")
	waitFor(t, "the sweep's timestamp", func() bool {
		return second.metric(fmt.Sprintf(`autopilot_last_sweep_timestamp_seconds{installation="%d"}`, apptest.Installation)) > 0
	})
	if code := second.terminate(); code != 0 {
		t.Fatalf("second replica exit %d", code)
	}
}
