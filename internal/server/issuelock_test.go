package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

func TestWithIssueLockOutsideAJobRunsUnlocked(t *testing.T) {
	ran := false
	err := WithIssueLock(context.Background(), "o/r", 1, func(ctx context.Context) error {
		ran = true
		if _, ok := LeaseFor(ctx, "o/r", 1); ok {
			t.Error("a lease was reported outside a server job")
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("ran=%v err=%v", ran, err)
	}
}

// TestWithIssueLockSerialisesASweepWithJobsOnTheIssue: a job for the issue
// waits while the sweep holds the issue through WithIssueLock, and the
// sweep's lease is visible to LeaseFor inside fn only.
func TestWithIssueLockSerialisesASweepWithJobsOnTheIssue(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var sweepHeld atomic.Bool
	rec := newRecorder()
	rec.hook = func(ctx context.Context, job job.Job) error {
		if sweepHeld.Load() {
			return errors.New("job ran while the sweep held the issue")
		}
		// Re-entrant: the job already holds its issue's lease.
		return WithIssueLock(ctx, job.Event.Repo, job.Event.Issue, func(context.Context) error { return nil })
	}
	sw := sweeperFunc(func(ctx context.Context, _ int64) error {
		err := WithIssueLock(ctx, "Codertocat/Hello-World", 5, func(ctx context.Context) error {
			if _, ok := LeaseFor(ctx, "Codertocat/Hello-World", 5); !ok {
				return errors.New("LeaseFor inside WithIssueLock found no lease")
			}
			sweepHeld.Store(true)
			close(entered)
			<-release
			sweepHeld.Store(false)
			return nil
		})
		if _, ok := LeaseFor(ctx, "Codertocat/Hello-World", 5); ok {
			return errors.New("the lease outlived WithIssueLock")
		}
		return err
	})
	srv := deliverDuringSweep(t, Deps{Processor: rec, Sweeper: sw}, rec, entered, release)
	eventually(t, "both jobs ok", func() bool {
		_, body := get(t, srv.url, "/metrics")
		return grepLines(body, `autopilot_jobs_total{event="issues",outcome="ok"} 1`) != "" &&
			grepLines(body, `autopilot_jobs_total{event="sweep",outcome="ok"} 1`) != ""
	})
}

// TestWithIssueLockRenewsTheLeaseAndCancelsWhenLost: a lease taken inside a
// job is renewed while fn runs; when renewal says it was taken over, fn's
// context is cancelled and the cause returned.
func TestWithIssueLockRenewsTheLeaseAndCancelsWhenLost(t *testing.T) {
	tests := []struct {
		name     string
		renew    func(n int32) error
		wantLost bool
	}{
		{"renewed while it runs", func(int32) error { return nil }, false},
		{"taken over", func(n int32) error {
			if n >= 2 {
				return job.ErrLeaseLost
			}
			return nil
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var renews atomic.Int32
			cfg := testConfig()
			cfg.LockTTL = 150 * time.Millisecond // renewed every 50ms
			locker := &scriptedLocker{Locker: memstore.NewLocker(), renew: func() error {
				return tt.renew(renews.Add(1))
			}}
			result := make(chan error, 1)
			sw := sweeperFunc(func(ctx context.Context, _ int64) error {
				err := WithIssueLock(ctx, "o/r", 9, func(ctx context.Context) error {
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(400 * time.Millisecond):
						return nil
					}
				})
				result <- err
				return err
			})
			s, _ := start(t, cfg, Deps{Processor: newRecorder(), Sweeper: sw, Locker: locker})
			s.noteInstallation(1)
			s.sweepAll(context.Background())
			var err error
			select {
			case err = <-result:
			case <-time.After(10 * time.Second):
				t.Fatal("sweep did not finish")
			}
			if got := renews.Load(); got < 2 {
				t.Errorf("lease renewed %d times during 400ms with a 150ms TTL, want at least 2", got)
			}
			if lost := errors.Is(err, job.ErrLeaseLost); lost != tt.wantLost {
				t.Fatalf("err = %v, want lost=%v", err, tt.wantLost)
			}
			// Released either way: the issue can be locked again.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			l, err := locker.Locker.Lock(ctx, IssueLockKey("o/r", 9))
			if err != nil {
				t.Fatalf("issue still locked after WithIssueLock returned: %v", err)
			}
			_ = l.Release(ctx)
		})
	}
}

// TestInstallationDeliveriesReachTheHookAndQueueNothing: installation and
// installation_repositories deliveries are answered 200, handed to
// OnInstallation with their action and installation, and never queued.
func TestInstallationDeliveriesReachTheHookAndQueueNothing(t *testing.T) {
	type seen struct {
		name, action string
		inst         int64
	}
	got := make(chan seen, 4)
	rec := newRecorder()
	_, srv := start(t, testConfig(), Deps{Processor: rec, OnInstallation: func(ev *ghevent.Event) {
		got <- seen{ev.Name, ev.Action, ev.Installation}
	}})
	for _, name := range []string{"installation.created", "installation_repositories.added"} {
		p := payload(t, name)
		body, err := servertest.WithInstallation(p.Body, 4321)
		if err != nil {
			t.Fatal(err)
		}
		d := delivery{event: p.Event, id: "hook-" + name, body: body}
		if code, _ := d.send(t, srv.url); code != http.StatusOK {
			t.Fatalf("%s answered %d, want 200", name, code)
		}
		select {
		case s := <-got:
			_, action, _ := strings.Cut(name, ".")
			if s.name != p.Event || s.action != action || s.inst != 4321 {
				t.Fatalf("hook saw %+v for %s", s, name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("hook not called for %s", name)
		}
	}
	if n := rec.total(); n != 0 {
		t.Fatalf("%d jobs ran for installation deliveries", n)
	}
}
