package redelivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// stubDeliveries serves a fixed delivery log, newest first, and fails the
// calls its hooks say.
type stubDeliveries struct {
	log       []Delivery // newest first
	listErr   func(call int) error
	postErr   func(id int64) error
	lists     int
	posts     []int64 // accepted
	attempted []int64 // every redelivery asked for
}

func (s *stubDeliveries) ListHookDeliveries(_ context.Context, cursor string, perPage int) ([]Delivery, string, error) {
	s.lists++
	if s.listErr != nil {
		if err := s.listErr(s.lists); err != nil {
			return nil, "", err
		}
	}
	start, _ := strconv.Atoi(cursor)
	end := min(start+perPage, len(s.log))
	next := ""
	if end < len(s.log) {
		next = strconv.Itoa(end)
	}
	return slices.Clone(s.log[start:end]), next, nil
}

func (s *stubDeliveries) RedeliverHookDelivery(_ context.Context, id int64) error {
	s.attempted = append(s.attempted, id)
	if s.postErr != nil {
		if err := s.postErr(id); err != nil {
			return err
		}
	}
	s.posts = append(s.posts, id)
	return nil
}

// memClaims is an in-memory Claims that fails while down is set.
type memClaims struct {
	seen map[string]bool
	down bool
}

func (c *memClaims) Seen(_ context.Context, id string) (bool, error) {
	if c.down {
		return false, errors.New("store down")
	}
	was := c.seen[id]
	c.seen[id] = true
	return was, nil
}

type stubWorld struct {
	api   *stubDeliveries
	now   time.Time
	store *memClaims
	r     *Job
	m     Metrics
}

// newStubWorld has one failed delivery per id given, a minute apart, the
// last one a minute ago.
func newStubWorld(ids ...int64) *stubWorld {
	w := &stubWorld{api: &stubDeliveries{}, now: time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC), m: Metrics{
		Requested:     prometheus.NewCounter(prometheus.CounterOpts{Name: "requested"}),
		Unrecoverable: prometheus.NewCounter(prometheus.CounterOpts{Name: "unrecoverable"}),
		OldestAge:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "oldest_age"}),
	}}
	for i, id := range slices.Backward(ids) {
		w.api.log = append(w.api.log, Delivery{ID: id, GUID: fmt.Sprint("g", id), StatusCode: 502,
			DeliveredAt: w.now.Add(-time.Duration(len(ids)-i) * time.Minute)})
	}
	w.store = &memClaims{seen: map[string]bool{}}
	w.r = New(Options{API: w.api, Claims: w.store, Metrics: w.m, Clock: func() time.Time { return w.now },
		Logger: slog.New(slog.DiscardHandler), Gap: -1})
	return w
}

func (w *stubWorld) pass(t *testing.T) error {
	t.Helper()
	w.now = w.now.Add(10 * time.Minute)
	return w.r.Pass(context.Background())
}

func TestRateLimitStopsTheJobUntilItsReset(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *stubWorld, until time.Time)
	}{
		{"listing rate limited", func(w *stubWorld, until time.Time) {
			w.api.listErr = func(call int) error {
				if call == 1 {
					return &forge.RateLimitError{Until: until}
				}
				return nil
			}
		}},
		{"redelivery rate limited", func(w *stubWorld, until time.Time) {
			w.api.postErr = func(int64) error {
				if len(w.api.attempted) == 1 {
					return fmt.Errorf("POST: %w", &forge.RateLimitError{Until: until, Secondary: true})
				}
				return nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newStubWorld(1, 2)
			until := w.now.Add(25 * time.Minute)
			tt.setup(w, until)
			if err := w.pass(t); err == nil {
				t.Fatal("rate-limited pass reported no error")
			}
			calls := w.api.lists + len(w.api.attempted)
			if err := w.pass(t); err != nil || w.api.lists+len(w.api.attempted) != calls {
				t.Fatalf("pass before the reset: err %v, %d calls made, want none", err, w.api.lists+len(w.api.attempted)-calls)
			}
			for w.now.Before(until) {
				if err := w.pass(t); err != nil {
					t.Fatal(err)
				}
			}
			if slices.Sort(w.api.posts); !slices.Equal(w.api.posts, []int64{1, 2}) {
				t.Fatalf("redelivered %v after the reset, want [1 2]", w.api.posts)
			}
		})
	}
}

func TestRedeliveryRefusalsAreNotRepeatedButOtherErrorsAre(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantTries int // requests for attempt 1 over three passes
	}{
		{"not found", fmt.Errorf("POST: %w: gone", forge.ErrNotFound), 1},
		{"past the window", fmt.Errorf("POST: %w: too old", forge.ErrValidation), 1},
		{"server error", &forge.TransientError{Status: 502, Err: errors.New("bad gateway")}, 3},
		{"credentials refused", errors.New("POST: 401 A JSON web token could not be decoded"), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newStubWorld(1, 2)
			w.api.postErr = func(id int64) error {
				if id == 1 {
					return tt.err
				}
				return nil
			}
			for range 3 {
				_ = w.pass(t)
			}
			tries := 0
			for _, id := range w.api.attempted {
				if id == 1 {
					tries++
				}
			}
			if tries != tt.wantTries {
				t.Errorf("attempt 1 asked %d times, want %d", tries, tt.wantTries)
			}
			if !slices.Contains(w.api.posts, 2) && tt.wantTries == 1 {
				t.Errorf("a refusal of attempt 1 kept attempt 2 from being redelivered: %v", w.api.attempted)
			}
		})
	}
}

func TestPageCapBoundsAPass(t *testing.T) {
	w := newStubWorld(1, 2, 3, 4, 5)
	w.r.perPage, w.r.maxPages = 1, 2 // as Options{PerPage: 1, MaxPages: 2}
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	if w.api.lists != 2 || !slices.Equal(w.api.posts, []int64{4, 5}) {
		t.Fatalf("%d pages read, redelivered %v; want 2 pages and the newest two", w.api.lists, w.api.posts)
	}
}

func TestPostsPerPassAreBounded(t *testing.T) {
	w := newStubWorld(1, 2, 3)
	w.r.maxPosts = 2
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	if len(w.api.posts) != 2 {
		t.Fatalf("redelivered %v in one pass, want 2", w.api.posts)
	}
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(w.api.posts); !slices.Equal(w.api.posts, []int64{1, 2, 3}) {
		t.Fatalf("redelivered %v after two passes, want all three once", w.api.posts)
	}
}

func TestUnrecoverableCountWaitsForTheStore(t *testing.T) {
	w := newStubWorld(1)
	w.api.postErr = func(int64) error { return fmt.Errorf("%w", forge.ErrValidation) } // never redelivered
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	w.now = w.now.Add(Window)
	w.store.down = true
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	if n := value(t, w.m.Unrecoverable); n != 0 {
		t.Fatalf("counted %v with the store down", n)
	}
	w.store.down = false
	if err := w.pass(t); err != nil {
		t.Fatal(err)
	}
	if n := value(t, w.m.Unrecoverable); n != 1 {
		t.Fatalf("autopilot_deliveries_unrecoverable_total = %v once the store answered, want 1", n)
	}
}

// value reads a counter or gauge.
func value(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gather: %v, %d families", err, len(families))
	}
	m := families[0].GetMetric()[0]
	return m.GetCounter().GetValue() + m.GetGauge().GetValue()
}
