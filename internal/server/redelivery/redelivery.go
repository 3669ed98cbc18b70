// Package redelivery is the App server's redelivery job. GitHub does not
// retry a webhook delivery the server failed (5xx, timeout, server down);
// it keeps every attempt for three days and redelivers one on request.
// Each pass reads the App's recent deliveries through GitHub's deliveries
// API and asks GitHub to redeliver every event none of whose attempts was
// answered 2xx; an event still undelivered when GitHub can no longer
// redeliver it is counted unrecoverable.
//
// It must never ask for an event GitHub shows delivered, ask twice for one
// failed attempt, read more than a bounded number of pages a pass, or keep
// asking while GitHub rate-limits it. It never processes a delivery itself:
// the server does, when GitHub redelivers it.
package redelivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Window is how long GitHub can redeliver a delivery attempt: an event
// still undelivered this long after its last attempt is unrecoverable.
const Window = 72 * time.Hour

// Defaults of Options.
const (
	DefaultPerPage  = 100              // GitHub's largest page
	DefaultMaxPages = 50               // 5,000 deliveries read per pass at most
	DefaultMaxPosts = 100              // redeliveries requested per pass at most
	DefaultMaxTries = 3                // redeliveries of one event before giving up
	DefaultGap      = time.Second      // between two requests: GitHub's guidance for mutations
	overlap         = 10 * time.Minute // re-read before the last pass's newest delivery
	claimTimeout    = 2 * time.Second  // bounds one Claims call
)

// Delivery is one attempt at delivering a webhook, as GitHub's deliveries
// API lists it (hook-delivery-item).
type Delivery struct {
	// ID is the attempt's id; a redelivery is a new attempt with a new id.
	ID int64
	// GUID is the X-GitHub-Delivery value, shared by every attempt of one
	// event.
	GUID        string
	DeliveredAt time.Time
	Redelivery  bool
	// Status describes the answer ("OK", "Invalid HTTP Response: 503",
	// "timed out"); StatusCode is its HTTP status, 0 when there was none.
	Status         string
	StatusCode     int
	Event, Action  string
	InstallationID int64
	RepositoryID   int64
}

// Delivered reports whether the attempt was answered 2xx.
func (d Delivery) Delivered() bool { return d.StatusCode >= 200 && d.StatusCode <= 299 }

// API is GitHub's deliveries API for the App's webhook, authenticated as
// the App (appauth.Auth implements it). A *forge.RateLimitError from either
// method pauses the job until its Until; forge.ErrNotFound or
// forge.ErrValidation from RedeliverHookDelivery means GitHub will never
// redeliver that attempt; any other error ends the pass.
type API interface {
	// ListHookDeliveries returns one page of the App's webhook deliveries,
	// newest first (GET /app/hook/deliveries), starting at cursor ("" for
	// the first page), and the cursor of the next page ("" after the last).
	ListHookDeliveries(ctx context.Context, cursor string, perPage int) ([]Delivery, string, error)
	// RedeliverHookDelivery asks GitHub to send attempt id's payload again
	// (POST /app/hook/deliveries/{id}/attempts, answered 202).
	RedeliverHookDelivery(ctx context.Context, id int64) error
}

// Claims records ids once across the replicas sharing a store (the
// server's Deduper): Seen reports whether id was recorded before.
type Claims interface {
	Seen(ctx context.Context, id string) (bool, error)
}

// Metrics are the collectors the job updates; the server registers them.
type Metrics struct {
	// Requested counts redeliveries GitHub accepted.
	Requested prometheus.Counter
	// Unrecoverable counts events lost for good (once across replicas).
	Unrecoverable prometheus.Counter
	// OldestAge is the age in seconds of the oldest undelivered event's
	// first failed attempt, 0 when there is none.
	OldestAge prometheus.Gauge
}

// Options configure a Job. API, Claims and Metrics are required.
type Options struct {
	API     API
	Claims  Claims
	Metrics Metrics
	// Clock defaults to time.Now; Sleep (wait d, false when ctx ended
	// first) to a timer.
	Clock func() time.Time
	Sleep func(ctx context.Context, d time.Duration) bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Bounds of a pass; zero values take the defaults above (Gap: a
	// negative value means none).
	Gap                                   time.Duration
	PerPage, MaxPages, MaxPosts, MaxTries int
}

// Job is the redelivery job. Its state lives in memory: after a restart
// the first pass reads GitHub's whole window again.
type Job struct {
	api     API
	claims  Claims
	now     func() time.Time
	sleep   func(context.Context, time.Duration) bool
	log     *slog.Logger
	metrics Metrics

	window   time.Duration
	gap      time.Duration
	perPage  int
	maxPages int
	maxPosts int
	maxTries int

	failing   map[string]*failure // by GUID: events with a failed attempt
	requested map[int64]time.Time // attempt ids whose redelivery GitHub accepted or refused
	mark      time.Time           // newest delivery read by the last read
	blocked   time.Time           // rate limited until then
}

// failure is what is known of one event that had a failed attempt.
type failure struct {
	first     time.Time // its earliest failed attempt
	latest    Delivery  // its latest attempt
	delivered bool      // some attempt was answered 2xx
	redone    map[int64]bool
}

// New builds a Job from o.
func New(o Options) *Job {
	j := &Job{
		api: o.API, claims: o.Claims, now: o.Clock, sleep: o.Sleep, log: o.Logger, metrics: o.Metrics,
		window: Window, gap: o.Gap, perPage: o.PerPage, maxPages: o.MaxPages, maxPosts: o.MaxPosts, maxTries: o.MaxTries,
		failing: map[string]*failure{}, requested: map[int64]time.Time{},
	}
	if j.now == nil {
		j.now = time.Now
	}
	if j.sleep == nil {
		j.sleep = sleep
	}
	if j.log == nil {
		j.log = slog.Default()
	}
	switch {
	case j.gap == 0:
		j.gap = DefaultGap
	case j.gap < 0:
		j.gap = 0
	}
	j.perPage = cmp.Or(max(j.perPage, 0), DefaultPerPage)
	j.maxPages = cmp.Or(max(j.maxPages, 0), DefaultMaxPages)
	j.maxPosts = cmp.Or(max(j.maxPosts, 0), DefaultMaxPosts)
	j.maxTries = cmp.Or(max(j.maxTries, 0), DefaultMaxTries)
	return j
}

// sleep waits for d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// Pass reads the deliveries since the last pass (all of GitHub's window the
// first time), then redelivers, gives up on, or forgets each failed event.
// It returns why it stopped early: a rate limit (later passes wait for its
// end), a GitHub or network failure, or ctx ending; the next pass retries
// whatever was left. Passes must not run concurrently.
func (j *Job) Pass(ctx context.Context) error {
	now := j.now()
	if now.Before(j.blocked) {
		j.log.Info("redelivery pass skipped: rate limited", "until", j.blocked)
		return nil
	}
	horizon := now.Add(-j.window)
	if err := j.read(ctx, horizon); err != nil {
		return err
	}
	err := j.act(ctx, now, horizon)
	j.report(now)
	return err
}

// read lists deliveries newest first down to the last pass's newest (less
// an overlap) or GitHub's window, and notes every failed event.
func (j *Job) read(ctx context.Context, horizon time.Time) error {
	stop := horizon
	if m := j.mark.Add(-overlap); m.After(stop) {
		stop = m
	}
	var seen []Delivery
	newest := j.mark
	cursor := ""
	for page := 0; ; page++ {
		if page == j.maxPages {
			// Moving on beats reading the same pages every pass.
			j.log.Warn("redelivery: page cap reached before the last pass's deliveries; failures in between are left to the sweep",
				"pages", j.maxPages, "wanted_back_to", stop)
			break
		}
		items, next, err := j.api.ListHookDeliveries(ctx, cursor, j.perPage)
		if err != nil {
			return j.blockedBy(fmt.Errorf("list webhook deliveries: %w", err))
		}
		done := next == "" || len(items) == 0
		for _, d := range items {
			if d.DeliveredAt.After(newest) {
				newest = d.DeliveredAt
			}
			if d.DeliveredAt.Before(stop) {
				done = true
			}
			if !d.DeliveredAt.Before(horizon) {
				seen = append(seen, d)
			}
		}
		if done {
			break
		}
		cursor = next
	}
	// Oldest first, so an event's success is noted after its failure.
	slices.SortFunc(seen, func(a, b Delivery) int {
		return cmp.Or(a.DeliveredAt.Compare(b.DeliveredAt), cmp.Compare(a.ID, b.ID))
	})
	for _, d := range seen {
		j.note(d)
	}
	j.mark = newest
	return nil
}

// note records one attempt. Events whose every attempt so far succeeded are
// not tracked: there is nothing to do for them. (So an event delivered once
// and then failed by a manual redelivery is redelivered again; the server
// answers that one 200, as a duplicate.)
func (j *Job) note(d Delivery) {
	f := j.failing[d.GUID]
	if f == nil {
		if d.Delivered() {
			return
		}
		f = &failure{first: d.DeliveredAt, latest: d, redone: map[int64]bool{}}
		j.failing[d.GUID] = f
	}
	if d.Delivered() {
		f.delivered = true
	} else if d.DeliveredAt.Before(f.first) {
		f.first = d.DeliveredAt
	}
	if d.DeliveredAt.After(f.latest.DeliveredAt) || d.DeliveredAt.Equal(f.latest.DeliveredAt) && d.ID > f.latest.ID {
		f.latest = d
	}
	if d.Redelivery {
		f.redone[d.ID] = true
	}
}

// act goes through the failed events, oldest first: delivered ones are
// forgotten once out of the window, undelivered ones out of it are counted
// unrecoverable, and the rest are redelivered (once per failed attempt, at
// most maxTries times per event).
func (j *Job) act(ctx context.Context, now, horizon time.Time) error {
	for id, at := range j.requested {
		if at.Before(horizon) {
			delete(j.requested, id)
		}
	}
	guids := make([]string, 0, len(j.failing))
	for g := range j.failing {
		guids = append(guids, g)
	}
	slices.SortFunc(guids, func(a, b string) int {
		return cmp.Or(j.failing[a].latest.DeliveredAt.Compare(j.failing[b].latest.DeliveredAt), cmp.Compare(a, b))
	})
	posts := 0
	for _, guid := range guids {
		f := j.failing[guid]
		switch {
		case f.delivered:
			if f.latest.DeliveredAt.Before(horizon) {
				delete(j.failing, guid)
			}
		case f.latest.DeliveredAt.Before(horizon):
			j.lost(ctx, guid, f)
		case j.requested[f.latest.ID].IsZero() && len(f.redone) < j.maxTries && posts < j.maxPosts:
			if posts > 0 && !j.sleep(ctx, j.gap) {
				return ctx.Err()
			}
			posts++
			if err := j.redeliver(ctx, guid, f, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// redeliver asks GitHub to redeliver the event's latest attempt. GitHub
// refusing that one attempt (not found, or past its window) is remembered
// and the pass goes on; a rate limit, a server or network error, or a
// credentials problem ends the pass, and the next pass asks again.
func (j *Job) redeliver(ctx context.Context, guid string, f *failure, now time.Time) error {
	d := f.latest
	log := j.log.With("delivery", guid, "attempt", d.ID, "event", d.Event, "action", d.Action,
		"installation", d.InstallationID, "status", d.StatusCode)
	err := j.api.RedeliverHookDelivery(ctx, d.ID)
	switch {
	case err == nil:
		j.requested[d.ID] = now
		j.metrics.Requested.Inc()
		log.Info("webhook redelivery requested", "failed_at", d.DeliveredAt)
		return nil
	case ctx.Err() == nil && (errors.Is(err, forge.ErrNotFound) || errors.Is(err, forge.ErrValidation)):
		j.requested[d.ID] = now // asking again would be refused again
		log.Warn("webhook redelivery refused", "err", err)
		return nil
	}
	return j.blockedBy(fmt.Errorf("redeliver attempt %d: %w", d.ID, err))
}

// blockedBy notes a rate limit in err, so passes wait for its end.
func (j *Job) blockedBy(err error) error {
	var rl *forge.RateLimitError
	if errors.As(err, &rl) {
		j.blocked = rl.Until
	}
	return err
}

// lost counts an event that failed and can no longer be redelivered, once
// across replicas (claimed in the shared store), and forgets it.
func (j *Job) lost(ctx context.Context, guid string, f *failure) {
	cctx, cancel := context.WithTimeout(ctx, claimTimeout)
	counted, err := j.claims.Seen(cctx, "redelivery-lost:"+guid)
	cancel()
	if err != nil {
		return // counted on a later pass, once the store answers
	}
	delete(j.failing, guid)
	if counted {
		return
	}
	j.metrics.Unrecoverable.Inc()
	j.log.Error("webhook delivery unrecoverable: it failed and was not delivered within GitHub's redelivery window; only the sweep catches its issue up",
		"delivery", guid, "event", f.latest.Event, "action", f.latest.Action, "installation", f.latest.InstallationID,
		"first_failed_at", f.first, "status", f.latest.StatusCode)
}

// report sets the age of the oldest event not delivered yet.
func (j *Job) report(now time.Time) {
	var oldest time.Time
	for _, f := range j.failing {
		if !f.delivered && (oldest.IsZero() || f.first.Before(oldest)) {
			oldest = f.first
		}
	}
	age := 0.0
	if !oldest.IsZero() {
		age = now.Sub(oldest).Seconds()
	}
	j.metrics.OldestAge.Set(age)
}
