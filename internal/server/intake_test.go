package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

func TestSignatureMatchesGitHubTestVector(t *testing.T) {
	// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
	secret := []byte("It's a Secret to Everybody")
	body := []byte("Hello, World!")
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := Sign(secret, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if !VerifySignature(secret, body, want) {
		t.Fatal("VerifySignature refused GitHub's test vector")
	}
}

func TestVerifySignatureRefusesWhatIsNotTheSHA256OfTheBody(t *testing.T) {
	secret := []byte("It's a Secret to Everybody")
	body := []byte("Hello, World!")
	good := Sign(secret, body)
	tests := []struct {
		name   string
		secret []byte
		body   []byte
		header string
	}{
		{"missing header", secret, body, ""},
		{"sha1 only", secret, body, "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59"},
		{"wrong secret", []byte("another secret"), body, good},
		{"empty secret", nil, body, Sign(nil, body)},
		{"other body", secret, []byte("Hello, World?"), good},
		{"truncated hex", secret, body, good[:len(good)-2]},
		{"not hex", secret, body, "sha256=" + strings.Repeat("zz", 32)},
		{"no prefix", secret, body, strings.TrimPrefix(good, "sha256=")},
		{"trailing junk", secret, body, good + "00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if VerifySignature(tt.secret, tt.body, tt.header) {
				t.Fatalf("VerifySignature accepted %q", tt.header)
			}
		})
	}
}

// TestIntakeAnswers covers every answer of POST $WEBHOOK_PATH and checks that
// only the accepted delivery reached the processor.
func TestIntakeAnswers(t *testing.T) {
	labeled := payload(t, "issues.labeled")
	bot := payload(t, "issue_comment.created.bot")
	var reserialised bytes.Buffer
	if err := json.Compact(&reserialised, labeled.Body); err != nil {
		t.Fatal(err)
	}
	form := []byte("payload=" + url.QueryEscape(string(labeled.Body)))
	huge := bytes.Repeat([]byte(" "), 30<<20)

	tests := []struct {
		name     string
		d        delivery
		sign     []byte // when set, the signature is over these bytes instead of the body
		want     int
		accepted bool
	}{
		{name: "accepted", d: delivery{event: "issues", id: "ok-1", body: labeled.Body}, want: 202, accepted: true},
		{name: "unsigned", d: delivery{event: "issues", id: "u", body: labeled.Body, header: http.Header{"X-Hub-Signature-256": {""}}}, want: 401},
		{name: "wrong secret", d: delivery{event: "issues", id: "w", body: labeled.Body, header: http.Header{
			"X-Hub-Signature-256": {Sign([]byte("not the secret"), labeled.Body)}}}, want: 401},
		{name: "sha1 only", d: delivery{event: "issues", id: "s1", body: labeled.Body, header: http.Header{
			"X-Hub-Signature-256": {""}, "X-Hub-Signature": {"sha1=0123456789abcdef0123456789abcdef01234567"}}}, want: 401},
		{name: "signature over re-serialised JSON", d: delivery{event: "issues", id: "re", body: labeled.Body}, sign: reserialised.Bytes(), want: 401},
		{name: "truncated JSON", d: delivery{event: "issues", id: "tr", body: labeled.Body[:len(labeled.Body)/2]}, want: 400},
		{name: "form-encoded", d: delivery{event: "issues", id: "form", body: form, header: http.Header{
			"Content-Type": {"application/x-www-form-urlencoded"}}}, want: 400},
		{name: "no content type", d: delivery{event: "issues", id: "noct", body: labeled.Body, header: http.Header{"Content-Type": {""}}}, want: 400},
		{name: "missing event header", d: delivery{event: "", id: "noev", body: labeled.Body}, want: 400},
		{name: "missing delivery header", d: delivery{event: "issues", id: "", body: labeled.Body}, want: 400},
		{name: "oversized 30 MB", d: delivery{event: "issues", id: "big", body: huge}, want: 413},
		{name: "ping", d: delivery{event: "ping", id: "p", body: payload(t, "ping").Body}, want: 200},
		{name: "unknown event", d: delivery{event: "star", id: "star", body: payload(t, "star.created").Body}, want: 200},
		{name: "unhandled action", d: delivery{event: "issues", id: "open", body: payload(t, "issues.opened").Body}, want: 200},
		{name: "installation event", d: delivery{event: "installation", id: "inst", body: payload(t, "installation.created").Body}, want: 200},
		{name: "own bot sender", d: delivery{event: "issue_comment", id: "bot", body: bot.Body}, want: 200},
		{name: "sweep event by webhook", d: delivery{event: "workflow_dispatch", id: "wd", body: payload(t, "workflow_dispatch").Body}, want: 200},
	}

	rec := newRecorder()
	_, srv := start(t, testConfig(), Deps{Processor: rec, BotLogin: "octocoders-linter[bot]"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.d.request(t, srv.url)
			if tt.sign != nil {
				req.Header.Set("X-Hub-Signature-256", Sign([]byte(testSecret), tt.sign))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	rec.waitDone(t, 1)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got := rec.count(tt.d.id)
		if tt.accepted && got != 1 {
			t.Errorf("%s: processed %d times, want 1", tt.name, got)
		}
		if !tt.accepted && got != 0 {
			t.Errorf("%s: refused delivery reached the processor %d times", tt.name, got)
		}
	}
}

func TestIntakeRefusesOversizedBodyWithoutContentLength(t *testing.T) {
	s, err := New(testConfig(), Deps{Processor: newRecorder(), Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	d := issueDelivery(t, "chunked", 1)
	req := d.request(t, "")
	// A body of unknown length (sent chunked) that never ends.
	req.Body = io.NopCloser(endless{})
	req.ContentLength = -1
	if code := serveLocal(s.Handler(), req); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status = %d, want 413", code)
	}
}

// endless reads as an unending run of spaces.
type endless struct{}

var spaces = bytes.Repeat([]byte(" "), 64<<10)

func (endless) Read(p []byte) (int, error) {
	return copy(p, spaces), nil
}

func TestIntakeRejectsOtherMethods(t *testing.T) {
	_, srv := start(t, testConfig(), Deps{Processor: newRecorder()})
	code, _ := get(t, srv.url, settings.DefaultWebhookPath)
	if code != http.StatusMethodNotAllowed {
		t.Fatalf("GET %s = %d, want 405", settings.DefaultWebhookPath, code)
	}
}

func TestDuplicateDeliveryIsProcessedOnce(t *testing.T) {
	rec := newRecorder()
	_, srv := start(t, testConfig(), Deps{Processor: rec})
	d := issueDelivery(t, "dup-1", 7)
	if code, _ := d.send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("first = %d, want 202", code)
	}
	if code, _ := d.send(t, srv.url); code != http.StatusOK {
		t.Fatalf("redelivery = %d, want 200", code)
	}
	rec.waitDone(t, 1)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if n := rec.count("dup-1"); n != 1 {
		t.Fatalf("processed %d times, want 1", n)
	}
}

// TestQueueFullRefusesAndAcceptsRedelivery fills the queue: the overflow gets
// 503 with Retry-After (never 2xx), is not recorded as seen, and is accepted
// when redelivered once there is room.
func TestQueueFullRefusesAndAcceptsRedelivery(t *testing.T) {
	cfg := testConfig()
	cfg.QueueSize, cfg.Workers = 2, 1
	rec := newRecorder()
	rec.gate = make(chan struct{})
	s, srv := start(t, cfg, Deps{Processor: rec})

	// The first job occupies the only worker; two more fill the queue.
	for i, id := range []string{"q-1", "q-2", "q-3"} {
		if code, _ := issueDelivery(t, id, 10+i).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s = %d, want 202", id, code)
		}
		if i == 0 {
			eventually(t, "first job running", func() bool { return s.queue.Len() == 0 })
		}
	}
	over := issueDelivery(t, "q-4", 20)
	code, retry := over.send(t, srv.url)
	if code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("overflow = %d Retry-After %q, want 503 with Retry-After", code, retry)
	}
	for range 3 {
		rec.gate <- struct{}{}
	}
	rec.waitDone(t, 3)
	close(rec.gate)
	if code, _ := over.send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("redelivery after 503 = %d, want 202", code)
	}
	rec.waitDone(t, 1)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"q-1", "q-2", "q-3", "q-4"} {
		if n := rec.count(id); n != 1 {
			t.Errorf("%s processed %d times, want 1", id, n)
		}
	}
}

func TestSameIssueJobsNeverOverlapWhileOtherIssuesRunInParallel(t *testing.T) {
	cfg := testConfig()
	cfg.Workers = 4
	rec := newRecorder()
	rec.delay = 5 * time.Millisecond
	// Parallelism is shown, not timed: issue 1's first job waits until a job
	// of another issue starts while it runs, and that job waits until issue
	// 1's first job is running. A queue that runs one job at a time never
	// meets both, and the waits fail.
	firstRunning, otherStarted := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wait := func(ctx context.Context, c <-chan struct{}, what string) {
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			t.Errorf("%s: waited 30 s; different issues should run in parallel", what)
		case <-ctx.Done():
		}
	}
	rec.hook = func(ctx context.Context, job job.Job) error {
		switch {
		case job.Delivery == "ser-b-0":
			close(firstRunning)
			wait(ctx, otherStarted, "issue 1's first job")
		case job.Event.Issue != 1:
			once.Do(func() {
				wait(ctx, firstRunning, "another issue's job")
				close(otherStarted)
			})
		}
		return nil
	}
	_, srv := start(t, cfg, Deps{Processor: rec})
	const perIssue, issues = 6, 4
	var order []string
	for i := range perIssue {
		for n := 1; n <= issues; n++ {
			id := "ser-" + string(rune('a'+n)) + "-" + string(rune('0'+i))
			order = append(order, id)
			if code, _ := issueDelivery(t, id, n).send(t, srv.url); code != http.StatusAccepted {
				t.Fatalf("%s = %d", id, code)
			}
		}
	}
	rec.waitDone(t, perIssue*issues)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if rec.overlaps != 0 {
		t.Fatalf("%d jobs started while another job on the same issue ran", rec.overlaps)
	}
	if rec.maxActive < 2 {
		t.Fatalf("at most %d job ran at once; different issues should run in parallel", rec.maxActive)
	}
	for _, id := range order {
		if n := rec.count(id); n != 1 {
			t.Errorf("%s processed %d times", id, n)
		}
	}
}

func TestPRCommentAndIssueEventShareTheIssueLease(t *testing.T) {
	// issue_comment on PR #2 whose body links issue #1 ... the vendored PR
	// comment links no issue, so build the link into the PR body.
	ev := mustDecode(t, "pull_request", payloadWithBody(t, "pull_request.edited", "Fixes #1"))
	key, locks := jobKeys(ev)
	want := []string{"Codertocat/Hello-World#1", "Codertocat/Hello-World#2"}
	if strings.Join(locks, ",") != strings.Join(want, ",") {
		t.Fatalf("locks = %v, want %v", locks, want)
	}
	if key != want[0] {
		t.Fatalf("key = %q, want %q", key, want[0])
	}
	run := mustDecode(t, "workflow_run", payload(t, "workflow_run.completed").Body)
	if key, locks := jobKeys(run); key != "repo:"+run.Repo || run.Repo == "" || len(locks) != 0 {
		t.Fatalf("workflow_run: key %q locks %v, want repo key and no lease", key, locks)
	}
}

// TestIntakeEventsOwnNothingOfTheRequestBody sends many deliveries at once,
// each about another issue and of another size, and checks every job saw
// its own payload: body buffers are reused, the events must not be.
func TestIntakeEventsOwnNothingOfTheRequestBody(t *testing.T) {
	const n = 200
	var mu sync.Mutex
	seen := map[string]*ghevent.Event{}
	rec := newRecorder()
	rec.hook = func(_ context.Context, job job.Job) error {
		mu.Lock()
		seen[job.Delivery] = job.Event
		mu.Unlock()
		return nil
	}
	cfg := testConfig()
	cfg.QueueSize = n
	_, srv := start(t, cfg, Deps{Processor: rec})
	want := map[string]*ghevent.Event{}
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		d := issueDelivery(t, fmt.Sprintf("own-%d", i), i)
		if i%2 == 0 { // vary the size, so buffers of other lengths are reused
			d.body = append(d.body, bytes.Repeat([]byte(" "), i*37)...)
		}
		want[d.id] = mustDecode(t, d.event, d.body)
		wg.Go(func() {
			if code, _ := d.send(t, srv.url); code != http.StatusAccepted {
				t.Errorf("%s: status %d, want 202", d.id, code)
			}
		})
	}
	wg.Wait()
	rec.waitDone(t, n)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	for id, w := range want {
		if got := seen[id]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: job saw %+v, want %+v", id, got, w)
		}
	}
}
