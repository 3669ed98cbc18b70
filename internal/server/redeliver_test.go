package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

const (
	appID        = 31337
	installation = 4711
	interval     = 10 * time.Minute
)

// redeliveryWorld is a fake GitHub with the App registered and servers
// authenticated as that App.
type redeliveryWorld struct {
	t     *testing.T
	gh    *fakegithub.Server
	clock *fakeclock.Clock
	key   []byte
}

func newRedeliveryWorld(t *testing.T) *redeliveryWorld {
	t.Helper()
	c := fakeclock.New(time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC))
	gh := fakegithub.New(fakegithub.Options{Clock: c.Now})
	t.Cleanup(gh.Close)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.AddRepo("octo/repo"); err != nil {
		t.Fatal(err)
	}
	if err := gh.RegisterApp(appID, "autopilot", &k.PublicKey, fakegithub.Installation{ID: installation, Account: "octo"}); err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	return &redeliveryWorld{t: t, gh: gh, clock: c, key: pemKey}
}

// server builds a server whose redelivery job talks to the fake; deduper
// may be shared between replicas (nil: its own).
func (w *redeliveryWorld) server(deduper server.Deduper) *server.Server {
	w.t.Helper()
	auth, err := appauth.New(appauth.Config{AppID: appID, PrivateKey: w.key, BaseURL: w.gh.URL(), Clock: w.clock.Now})
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := server.New(settings.Config{WebhookSecret: "s", RedeliveryInterval: interval},
		server.Deps{Processor: nopProcessor{}, Deliveries: auth, Deduper: deduper, Clock: w.clock.Now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		w.t.Fatal(err)
	}
	s.SetRedeliveryLimits(-1, 100, 50, 100)
	return s
}

// record records a delivery attempt answered code (0: none) and returns its
// id.
func (w *redeliveryWorld) record(guid string, code int) int64 {
	w.t.Helper()
	id, err := w.gh.RecordDelivery(fakegithub.HookDelivery{AppID: appID, GUID: guid, Event: "issue_comment",
		Action: "created", StatusCode: code, InstallationID: installation})
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// tick moves the clock one interval on and runs one tick of s's job.
func (w *redeliveryWorld) tick(s *server.Server) {
	w.clock.Advance(interval)
	s.RedeliveryTick(context.Background())
}

type nopProcessor struct{}

func (nopProcessor) Process(context.Context, job.Job) error { return nil }

// metric sums the samples of a counter or gauge.
func metric(t *testing.T, s *server.Server, name string) float64 {
	t.Helper()
	return sample(t, s, name, "")
}

// passes is how many redelivery passes s ran with the outcome.
func passes(t *testing.T, s *server.Server, outcome string) float64 {
	t.Helper()
	return sample(t, s, "autopilot_redelivery_passes_total", outcome)
}

// sample sums the samples of metric name whose first label has the value
// label (any, when empty).
func sample(t *testing.T, s *server.Server, name, label string) float64 {
	t.Helper()
	families, err := s.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		sum := 0.0
		for _, m := range f.GetMetric() {
			if label == "" || len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == label {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		return sum
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func TestRedeliveryJobRedeliversWhatFailedAndNothingElse(t *testing.T) {
	tests := []struct {
		name string
		// codes are the attempts of one event, oldest first.
		codes []int
		// again is what each redelivery's attempt answers (-1: no
		// attempt shows up).
		again int
		ticks int
		// want is how many redeliveries are requested over the ticks.
		want int
	}{
		{name: "failed delivery is redelivered once", codes: []int{503}, again: -1, ticks: 3, want: 1},
		{name: "delivery without an answer is redelivered", codes: []int{0}, again: -1, ticks: 2, want: 1},
		{name: "successful delivery is left alone", codes: []int{202}, again: -1, ticks: 2, want: 0},
		{name: "success after a failure is left alone", codes: []int{500, 200}, again: -1, ticks: 2, want: 0},
		{name: "redelivered successfully, not again", codes: []int{503}, again: 202, ticks: 3, want: 1},
		{name: "failing redeliveries stop after three", codes: []int{503}, again: 503, ticks: 6, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRedeliveryWorld(t)
			if tt.again >= 0 {
				w.gh.RedeliverWith(func(fakegithub.HookDelivery) int { return tt.again })
			}
			var last int64
			for _, code := range tt.codes {
				last = w.record("guid-1", code)
			}
			s := w.server(nil)
			for range tt.ticks {
				w.tick(s)
			}
			got := w.gh.RedeliveryRequests()
			if len(got) != tt.want {
				t.Fatalf("redelivery requests %v, want %d", got, tt.want)
			}
			if tt.want > 0 && got[0] != last {
				t.Errorf("first redelivery of attempt %d, want the latest attempt %d", got[0], last)
			}
			if n := metric(t, s, "autopilot_redeliveries_requested_total"); n != float64(tt.want) {
				t.Errorf("autopilot_redeliveries_requested_total = %v, want %d", n, tt.want)
			}
			if n := passes(t, s, "ok"); n != float64(tt.ticks) {
				t.Errorf("%v passes ok, want %d", n, tt.ticks)
			}
		})
	}
}

func TestUndeliveredEventsOlderThanThreeDaysAreCountedUnrecoverableOnce(t *testing.T) {
	w := newRedeliveryWorld(t)
	w.gh.RedeliverWith(func(fakegithub.HookDelivery) int { return 503 }) // the App's server stays broken
	w.record("lost", 503)
	w.clock.Advance(time.Hour)
	w.record("saved", 500)
	w.record("saved", 200)
	s := w.server(nil)

	w.tick(s)
	if age := metric(t, s, "autopilot_undelivered_oldest_age_seconds"); age != (time.Hour + interval).Seconds() {
		t.Errorf("oldest undelivered age %vs, want %vs", age, (time.Hour + interval).Seconds())
	}
	// Two more redeliveries over the next ticks fail too; then nothing,
	// until three days after the last attempt.
	for range 3 {
		w.tick(s)
	}
	last := w.gh.Deliveries(appID)[0]
	if !last.Redelivery || last.GUID != "lost" {
		t.Fatalf("newest attempt %+v, want the last redelivery of the lost event", last)
	}
	end := last.DeliveredAt.Add(3 * 24 * time.Hour)
	for w.clock.Now().Add(6 * time.Hour).Before(end) {
		w.clock.Advance(6*time.Hour - interval)
		w.tick(s)
		if n := metric(t, s, "autopilot_deliveries_unrecoverable_total"); n != 0 {
			t.Fatalf("counted unrecoverable at %s, within three days of its last attempt", w.clock.Now())
		}
	}
	w.clock.Advance(end.Sub(w.clock.Now()))
	w.tick(s)
	if n := metric(t, s, "autopilot_deliveries_unrecoverable_total"); n != 1 {
		t.Fatalf("autopilot_deliveries_unrecoverable_total = %v, want 1", n)
	}
	if age := metric(t, s, "autopilot_undelivered_oldest_age_seconds"); age != 0 {
		t.Errorf("oldest undelivered age %vs after the loss was counted, want 0", age)
	}
	if got := len(w.gh.RedeliveryRequests()); got != 3 {
		t.Errorf("%d redeliveries of the lost event, want 3", got)
	}
	w.tick(s)
	if n := metric(t, s, "autopilot_deliveries_unrecoverable_total"); n != 1 {
		t.Fatalf("counted again: autopilot_deliveries_unrecoverable_total = %v, want 1", n)
	}
}

func TestRedeliveryJobReadsEveryPageFirstAndOnlyNewOnesAfter(t *testing.T) {
	w := newRedeliveryWorld(t)
	var failed []int64
	for i := range 250 {
		code := 200
		if i%50 == 7 {
			code = 502
		}
		id := w.record("", code)
		if code != 200 {
			failed = append(failed, id)
		}
		w.clock.Advance(time.Minute)
	}
	s := w.server(nil)
	w.tick(s)
	got := w.gh.RedeliveryRequests()
	slices.Sort(got)
	if !slices.Equal(got, failed) {
		t.Fatalf("redelivered %v, want the failed %v", got, failed)
	}
	if n := w.gh.Count("GET /app/hook/deliveries"); n != 3 {
		t.Errorf("first pass read %d pages of 100 for 250 deliveries, want 3", n)
	}
	late := w.record("", 504)
	w.tick(s)
	if n := w.gh.Count("GET /app/hook/deliveries"); n != 4 {
		t.Errorf("second pass read %d pages, want 1", n-3)
	}
	if got := w.gh.RedeliveryRequests(); got[len(got)-1] != late {
		t.Errorf("late failure %d not redelivered: %v", late, got)
	}
}

func TestGitHubErrorsLeaveFailuresForTheNextPass(t *testing.T) {
	tests := []struct {
		name, method, path string
	}{
		{"listing answers 502", "GET", "/app/hook/deliveries"},
		{"redelivery answers 500", "POST", "/app/hook/deliveries/*/attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRedeliveryWorld(t)
			id := w.record("g", 503)
			s := w.server(nil)
			w.gh.Script(tt.method, tt.path, fakegithub.Fail(502), fakegithub.Fail(500))
			w.tick(s)
			w.tick(s)
			if got := w.gh.RedeliveryRequests(); len(got) != 0 {
				t.Fatalf("requests %v while GitHub failed", got)
			}
			if n := passes(t, s, "error"); n != 2 {
				t.Errorf("%v failed passes, want 2", n)
			}
			w.tick(s)
			if got := w.gh.RedeliveryRequests(); !slices.Equal(got, []int64{id}) {
				t.Fatalf("requests %v once GitHub answered again, want [%d]", got, id)
			}
		})
	}
}

func TestOneReplicaRedeliversPerInterval(t *testing.T) {
	w := newRedeliveryWorld(t)
	id := w.record("g", 503)
	shared := memstore.NewDeduper(settings.MinDedupeTTL, w.clock.Now)
	a, b := w.server(shared), w.server(shared)
	w.clock.Advance(interval)
	a.RedeliveryTick(context.Background())
	b.RedeliveryTick(context.Background())
	if got := w.gh.RedeliveryRequests(); !slices.Equal(got, []int64{id}) {
		t.Fatalf("requests %v, want one of [%d]", got, id)
	}
	if pa, pb := passes(t, a, "ok"), passes(t, b, "ok"); pa+pb != 1 {
		t.Fatalf("passes run: %v and %v, want 1 in all", pa, pb)
	}
}

func TestRedeliveryJobRunsOnTheTimer(t *testing.T) {
	w := newRedeliveryWorld(t)
	w.clock.Advance(time.Since(w.clock.Now())) // the server runs on the wall clock
	id := w.record("g", 503)
	auth, err := appauth.New(appauth.Config{AppID: appID, PrivateKey: w.key, BaseURL: w.gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(settings.Config{WebhookSecret: "s", RedeliveryInterval: time.Hour},
		server.Deps{Processor: nopProcessor{}, Deliveries: auth, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.gh.RedeliveryRequests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.gh.RedeliveryRequests(); !slices.Equal(got, []int64{id}) {
		t.Fatalf("requests %v, want [%d] from the pass at start", got, id)
	}
}
