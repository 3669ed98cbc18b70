package loadtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// FloodOptions shape one measurement of how long one answer waits behind a
// flood of comments (issue 31's fairness figure).
type FloodOptions struct {
	// Flood is how many comments arrive first (default 40).
	Flood int
	// FloodIssues is how many issues the flood spans, round-robin (default
	// 1: one busy issue).
	FloodIssues int
	// OtherInstallation puts the answer in another installation than the
	// flood.
	OtherInstallation bool
	// Requests is how many GitHub requests one job makes (default 8), each
	// taking PerRequest (default 50 ms).
	Requests   int
	PerRequest time.Duration
	// Workers configures the server (default 8).
	Workers int
	// RedisURL, when set, makes Redis the server's work queue.
	RedisURL string
}

// AnswerBehindFlood starts a server whose jobs each take Requests ×
// PerRequest, sends Flood comments on the flood's issues, then one comment
// on another issue (the answer), and returns how long the answer took from
// its acknowledgement to the end of its job. The flood's jobs still queued
// then are cut short, so the run ends soon after.
func AnswerBehindFlood(ctx context.Context, o FloodOptions) (time.Duration, error) {
	if o.Flood <= 0 {
		o.Flood = 40
	}
	if o.FloodIssues <= 0 {
		o.FloodIssues = 1
	}
	if o.Requests <= 0 {
		o.Requests = 8
	}
	if o.PerRequest <= 0 {
		o.PerRequest = 50 * time.Millisecond
	}
	lo := withDefaults(Options{Workers: o.Workers, RedisURL: o.RedisURL, QueueSize: 1000})
	comment, err := commentPayload()
	if err != nil {
		return 0, err
	}
	const floodInstallation, otherInstallation = 1001, 1002
	answerIssue := o.FloodIssues + 1
	p := &floodProcessor{answer: "answer", cost: time.Duration(o.Requests) * o.PerRequest,
		ended: make(chan time.Time, 1), cut: make(chan struct{})}
	srv, closeStore, err := newServer(lo, p)
	if err != nil {
		return 0, err
	}
	defer closeStore()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("loadtest listen: %w", err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()
	url := "http://" + ln.Addr().String() + settings.DefaultWebhookPath
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(id string, issue int, inst int64) error {
		body, err := servertest.WithIssue(comment, issue)
		if err == nil {
			body, err = servertest.WithInstallation(body, inst)
		}
		if err != nil {
			return err
		}
		r := request{event: "issue_comment", body: body, sig: server.Sign([]byte(secret), body)}
		if code := post(ctx, client, url, r, id); code != http.StatusAccepted {
			return fmt.Errorf("loadtest: %s answered %d, want 202", id, code)
		}
		return nil
	}
	for i := range o.Flood {
		if err := send("flood-"+strconv.Itoa(i), 1+i%o.FloodIssues, floodInstallation); err != nil {
			return 0, err
		}
	}
	inst := int64(floodInstallation)
	if o.OtherInstallation {
		inst = otherInstallation
	}
	if err := send(p.answer, answerIssue, inst); err != nil {
		return 0, err
	}
	acked := time.Now()
	var ended time.Time
	select {
	case ended = <-p.ended:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	close(p.cut)
	stop()
	if err := <-served; err != nil {
		return 0, err
	}
	return ended.Sub(acked), nil
}

// commentPayload is the vendored issue_comment.created example.
func commentPayload() ([]byte, error) {
	dir, err := servertest.Dir()
	if err != nil {
		return nil, err
	}
	ps, err := servertest.Load(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Name == "issue_comment.created" {
			return p.Body, nil
		}
	}
	return nil, fmt.Errorf("loadtest: no issue_comment.created example in %s", dir)
}

// floodProcessor spends cost on each job (its GitHub requests), notes
// when the answer's job ends, and once cut, ends every job at once.
type floodProcessor struct {
	answer string
	cost   time.Duration
	cut    chan struct{}
	ended  chan time.Time
}

func (p *floodProcessor) Process(ctx context.Context, job job.Job) error {
	t := time.NewTimer(p.cost)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.cut:
	case <-ctx.Done():
		return ctx.Err()
	}
	if job.Delivery == p.answer {
		p.ended <- time.Now()
	}
	return nil
}
