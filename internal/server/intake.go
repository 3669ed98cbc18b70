package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// retryAfter is the Retry-After (seconds) sent with every 503.
const retryAfter = 5

// Delivery outcomes, the "outcome" label of autopilot_webhook_deliveries_total.
const (
	OutcomeAccepted     = "accepted"     // 202, queued
	OutcomeDuplicate    = "duplicate"    // 200, delivery id seen before
	OutcomeIgnored      = "ignored"      // 200, event/action not handled
	OutcomeOwnBot       = "own_bot"      // 200, sent by the App's own bot
	OutcomePing         = "ping"         // 200
	OutcomeUnauthorized = "unauthorized" // 401
	OutcomeBadRequest   = "bad_request"  // 400
	OutcomeImpossible   = "impossible"   // 400, a text over GitHub's limits
	OutcomeTooLarge     = "too_large"    // 413
	OutcomeQueueFull    = "queue_full"   // 503
	OutcomeUnavailable  = "unavailable"  // 503, draining or store down
)

// storeTimeout bounds a dedupe call made while a delivery waits for its answer.
const storeTimeout = 2 * time.Second

// maxLinkedLocks caps the issues one PR event locks; a PR body linking more
// is unusual enough that the rest are left to the sweep's locking.
const maxLinkedLocks = 16

// intake answers POST $WEBHOOK_PATH. The order matters: nothing is parsed
// before the signature verifies, the queue slot is reserved before the
// delivery id is recorded, and 202 is sent only for a committed job.
func (s *Server) intake(w http.ResponseWriter, r *http.Request) {
	tr := s.deps.Tracer
	ctx, span := tr.Delivery(r.Context())
	defer span.End()
	a := &responder{s: s, w: w, start: time.Now(), event: "unverified", span: span}
	_, verify := tr.Step(ctx, tracing.SpanVerify)
	body, release, ok := s.readVerified(r, a)
	verify.End()
	if !ok {
		return
	}
	defer release()
	name, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	tracing.Delivered(span, name, "", delivery, 0, "", 0)
	ev, log, ok := s.triage(a, name, delivery, body)
	if !ok {
		return
	}
	_, issue, _ := ghevent.IssueKey(ev)
	tracing.Delivered(span, name, ev.Action, delivery, ev.Installation, ev.Repo, issue)
	job := job.Job{Delivery: delivery, Event: ev, Received: s.now(), Trace: tr.Carry(ctx)}
	if s.stream != nil {
		_, step := tr.Step(ctx, tracing.SpanEnqueue)
		defer step.End()
		s.enqueue(r, job, log, a.answer)
		return
	}
	_, step := tr.Step(ctx, tracing.SpanDedupe)
	defer step.End()
	s.queueLocal(r, job, log, a.answer)
}

// responder answers one delivery and counts it under its event label
// ("unverified" until the signature verifies).
type responder struct {
	s     *Server
	w     http.ResponseWriter
	start time.Time
	event string
	span  trace.Span // the delivery's (a no-op when traces are off)
}

func (a *responder) answer(code int, outcome, msg string) {
	if code == http.StatusServiceUnavailable {
		a.w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	a.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	a.w.WriteHeader(code)
	_, _ = io.WriteString(a.w, msg+"\n")
	a.s.metrics.Delivery(a.event, outcome, time.Since(a.start))
	tracing.Answered(a.span, code, outcome)
}

// readVerified reads the body and checks the signature, the event and
// delivery headers and the content type; false when it answered. The
// caller releases the body's buffer.
func (s *Server) readVerified(r *http.Request, a *responder) (body []byte, release func(), ok bool) {
	if s.draining.Load() {
		a.answer(http.StatusServiceUnavailable, OutcomeUnavailable, "shutting down; redeliver later")
		return nil, nil, false
	}
	if r.ContentLength > MaxBody {
		a.answer(http.StatusRequestEntityTooLarge, OutcomeTooLarge, "payload over 25 MiB")
		return nil, nil, false
	}
	body, release, err := s.readBody(a.w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.answer(http.StatusRequestEntityTooLarge, OutcomeTooLarge, "payload over 25 MiB")
			return nil, nil, false
		}
		a.answer(http.StatusBadRequest, OutcomeBadRequest, "could not read body")
		return nil, nil, false
	}
	refuse := func(code int, outcome, msg string) ([]byte, func(), bool) {
		release()
		a.answer(code, outcome, msg)
		return nil, nil, false
	}
	delivery := r.Header.Get("X-GitHub-Delivery")
	if !VerifySignature(s.secret, body, r.Header.Get("X-Hub-Signature-256")) {
		s.log.Info("webhook refused: missing or wrong X-Hub-Signature-256", "delivery", delivery, "remote", r.RemoteAddr)
		return refuse(http.StatusUnauthorized, OutcomeUnauthorized, "missing or wrong X-Hub-Signature-256")
	}
	name := r.Header.Get("X-GitHub-Event")
	a.event = eventLabel(name)
	if name == "" || delivery == "" {
		return refuse(http.StatusBadRequest, OutcomeBadRequest, "missing X-GitHub-Event or X-GitHub-Delivery")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return refuse(http.StatusBadRequest, OutcomeBadRequest, "content type must be application/json (set it in the App's webhook settings)")
	}
	return body, release, true
}

// triage decodes a verified delivery and answers those no job is queued
// for: pings, events autopilot does not act on, installation changes, the
// App's own deliveries, and everything while the store is down. ok: queue it.
func (s *Server) triage(a *responder, name, delivery string, body []byte) (ev *ghevent.Event, log func() *slog.Logger, ok bool) {
	switch {
	case name == "ping":
		a.answer(http.StatusOK, OutcomePing, "pong")
		return nil, nil, false
	case !routedEvents[name]:
		// Not subscribed to, or nothing autopilot acts on: no need to parse.
		a.answer(http.StatusOK, OutcomeIgnored, "ignored: event not handled")
		return nil, nil, false
	}
	ev, err := ghevent.DecodeFast(name, body)
	if err != nil {
		s.log.Info("webhook refused: malformed payload", "delivery", delivery, "event", name, "err", err)
		a.answer(http.StatusBadRequest, OutcomeBadRequest, "malformed payload: "+err.Error())
		return nil, nil, false
	}
	s.noteInstallation(ev.Installation)
	// The delivery's logger is built only when something is logged: With
	// formats its attributes at once, and most deliveries log nothing.
	log = func() *slog.Logger {
		return s.log.With("delivery", delivery, "event", name, "action", ev.Action, "installation", ev.Installation)
	}
	switch {
	case ghevent.Noted(name):
		log().Info("installation changed", "sender", ev.Sender.Login)
		if s.deps.OnInstallation != nil {
			s.deps.OnInstallation(ev)
		}
		a.answer(http.StatusOK, OutcomeIgnored, "noted")
	case ghevent.FromSelf(ev, s.deps.BotLogin):
		a.answer(http.StatusOK, OutcomeOwnBot, "ignored: sent by this App")
	case !ev.Handled || ev.Sweep:
		// Sweeps come from the timer in App mode, never from a delivery.
		a.answer(http.StatusOK, OutcomeIgnored, "ignored: event not handled")
	case s.storeDown.Load():
		a.answer(http.StatusServiceUnavailable, OutcomeUnavailable, "store unavailable; redeliver later")
	default:
		if why := impossible(ev); why != "" {
			log().Warn("webhook refused: GitHub never sends this", "why", why)
			a.answer(http.StatusBadRequest, OutcomeImpossible, "refused: "+why)
			return nil, nil, false
		}
		return ev, log, true
	}
	return nil, nil, false
}

// queueLocal puts an accepted delivery on the in-process queue and
// answers: 202 once queued, 200 for a delivery id seen before, 503 when the
// queue is full or the dedupe store does not answer.
func (s *Server) queueLocal(r *http.Request, job job.Job, log func() *slog.Logger, answer func(code int, outcome, msg string)) {
	if !s.queue.Reserve() {
		if s.fullWarned.CompareAndSwap(false, true) {
			// Once per full spell; the metrics count every refusal.
			log().Warn("queue full; refusing deliveries with 503 until there is room", "queue", s.cfg.QueueSize)
		}
		answer(http.StatusServiceUnavailable, OutcomeQueueFull, "queue full; redeliver later")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	dup, err := s.deps.Deduper.Seen(ctx, job.Delivery)
	cancel()
	if err != nil {
		s.queue.Unreserve()
		if r.Context().Err() == nil { // not just the sender hanging up
			s.noteStore(err)
		}
		log().Error("dedupe failed; delivery refused", "err", err)
		answer(http.StatusServiceUnavailable, OutcomeUnavailable, "store unavailable; redeliver later")
		return
	}
	if dup {
		s.queue.Unreserve()
		answer(http.StatusOK, OutcomeDuplicate, "duplicate delivery")
		return
	}
	if s.fullWarned.Load() {
		s.fullWarned.Store(false)
	}
	key, locks := jobKeys(job.Event)
	s.queue.Commit(workq.Work{Job: job, Key: key, Locks: locks, Queued: time.Now()})
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		log().Debug("delivery queued", "key", key)
	}
	answer(http.StatusAccepted, OutcomeAccepted, "queued")
}

// enqueue appends an accepted delivery to the Redis work queue and answers:
// 202 once it is in the stream, 200 for a delivery id queued before, 503
// when the stream holds QUEUE_MAX entries or Redis does not answer.
func (s *Server) enqueue(r *http.Request, job job.Job, log func() *slog.Logger,
	answer func(code int, outcome, msg string)) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	res, err := s.deps.Queue.Enqueue(ctx, job, s.cfg.QueueMax)
	cancel()
	switch {
	case err != nil:
		if r.Context().Err() == nil { // not just the sender hanging up
			s.noteStore(err)
		}
		log().Error("queueing failed; delivery refused", "err", err)
		answer(http.StatusServiceUnavailable, OutcomeUnavailable, "store unavailable; redeliver later")
	case res == redisq.EnqueuedFull:
		if s.fullWarned.CompareAndSwap(false, true) {
			log().Warn("queue full; refusing deliveries with 503 until there is room", "queue_max", s.cfg.QueueMax)
		}
		answer(http.StatusServiceUnavailable, OutcomeQueueFull, "queue full; redeliver later")
	case res == redisq.EnqueuedDuplicate:
		answer(http.StatusOK, OutcomeDuplicate, "duplicate delivery")
	default:
		if s.fullWarned.Load() {
			s.fullWarned.Store(false)
		}
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			log().Debug("delivery queued in redis")
		}
		answer(http.StatusAccepted, OutcomeAccepted, "queued")
	}
}

// pooledBody is the largest body whose buffer is reused: most of GitHub's
// payloads are far smaller, and a rare large one is not worth keeping.
const pooledBody = 256 << 10

// readBody reads the whole body under the MaxBody cap, presizing the buffer
// from Content-Length. A body of known, ordinary size is read into a pooled
// buffer: call release once nothing refers to the body any more (intake
// keeps nothing of it: the decoded Event holds copies).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	rd := http.MaxBytesReader(w, r.Body, MaxBody)
	defer rd.Close()
	n := r.ContentLength
	if n <= 0 || n > MaxBody {
		body, err = io.ReadAll(rd)
		return body, func() {}, err
	}
	if n > pooledBody {
		body = make([]byte, n)
		if _, err := io.ReadFull(rd, body); err != nil {
			return nil, nil, err
		}
		return body, func() {}, nil
	}
	bp, _ := s.bodies.Get().(*[]byte)
	if bp == nil || int64(cap(*bp)) < n {
		b := make([]byte, 0, max(n, 64<<10))
		bp = &b
	}
	body = (*bp)[:n]
	release = func() { s.bodies.Put(bp) }
	if _, err := io.ReadFull(rd, body); err != nil {
		release()
		return nil, nil, err
	}
	// Anything past Content-Length is a framing error, not our body.
	return body, release, nil
}

// GitHub's limits on the texts a delivery carries: 65,536 characters for
// the body of an issue, pull request, comment or review, and 1,024 for a
// title (the most GitHub stores). A delivery over them was not sent by
// GitHub, and the queue's sizing rests on them (docs/app.md §4).
const (
	maxTextChars  = 65536
	maxTitleChars = 1024
)

// impossible says which text of ev is longer than GitHub allows ("" when
// none is). Characters are counted as code points, never more than GitHub
// counts, so nothing GitHub sends is refused.
func impossible(ev *ghevent.Event) string {
	body := "issue body"
	if ev.Pull != nil { // the event is about a pull request, whatever its kind
		body = "pull request body"
	}
	type text struct {
		what, s string
		max     int
	}
	texts := []text{{"title", ev.Title, maxTitleChars}, {body, ev.Body, maxTextChars}}
	if ev.Comment != nil {
		texts = append(texts, text{"comment body", ev.Comment.Body, maxTextChars})
	}
	if ev.Review != nil {
		texts = append(texts, text{"review body", ev.Review.Body, maxTextChars})
	}
	if ev.Pull != nil {
		texts = append(texts, text{body, ev.Pull.Body, maxTextChars}, text{"title", ev.Pull.Title, maxTitleChars})
	}
	for _, t := range texts {
		if len(t.s) <= t.max {
			continue // bytes bound characters
		}
		if n := utf8.RuneCountInString(t.s); n > t.max {
			return fmt.Sprintf("the %s is %d characters; GitHub allows at most %d", t.what, n, t.max)
		}
	}
	return ""
}

// jobKeys picks a job's serialisation key and the issue leases it holds,
// as the event's kind routes it (ghevent.RoutingOf): for ByIssue, the issue
// or PR it names plus the issues a PR links to, sorted so leases are always
// taken in one order. An event naming no issue (ByRepo: workflow_run,
// merge_group) is serialised per repository and holds no lease; its
// processor locks the issue it finds with WithIssueLock.
func jobKeys(ev *ghevent.Event) (string, []string) {
	if ghevent.RoutingOf(ev.Name) != ghevent.ByIssue {
		return "repo:" + ev.Repo, nil
	}
	var locks []string
	if repo, n, ok := ghevent.IssueKey(ev); ok {
		locks = append(locks, IssueLockKey(repo, n))
	}
	for i, n := range ev.LinkedIssues {
		if i == maxLinkedLocks {
			break
		}
		if n > 0 && ev.Repo != "" {
			locks = append(locks, IssueLockKey(ev.Repo, n))
		}
	}
	slices.Sort(locks)
	locks = slices.Compact(locks)
	if len(locks) == 0 {
		return "repo:" + ev.Repo, nil
	}
	return locks[0], locks
}

// routedEvents are the events intake decodes: those ghevent's kinds table
// marks for the App (the events autopilot acts on and the installation
// events it notes). Any other event is answered 200 unparsed.
var routedEvents = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range ghevent.Kinds() {
		m[k.Name] = k.App
	}
	return m
}()

// eventLabel is the metrics label of an event: its name when routed (or
// ping), else "other", so a header cannot grow the label set.
func eventLabel(name string) string {
	if routedEvents[name] || name == "ping" {
		return name
	}
	return "other"
}
