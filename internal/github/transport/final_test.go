package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoCredentialsIsNotRetried: a request the next transport cannot
// authenticate (forge.ErrNoInstallation: GitHub does not know the App
// installation) is sent once and its error returned at once, with no
// backoff; a network failure is still retried.
func TestNoCredentialsIsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		sends int
	}{
		{"unknown installation", fmt.Errorf("installation 4040: %w", forge.ErrNoInstallation), 1},
		{"network", errors.New("connection reset"), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sends, sleeps := 0, 0
			tr := New(Config{
				Next:  rtFunc(func(*http.Request) (*http.Response, error) { sends++; return nil, tc.err }),
				Now:   func() time.Time { return epoch },
				Sleep: func(context.Context, time.Duration) error { sleeps++; return nil },
				Rand:  func() float64 { return 0 }, Log: slog.New(slog.DiscardHandler),
				MaxWait: time.Minute, MaxRetries: 3, Timeout: time.Second,
			})
			req, _ := http.NewRequest(http.MethodGet, "https://api.github.com/repos/o/r/issues/1", nil)
			_, err := tr.RoundTrip(req)
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
			if sends != tc.sends || sleeps != tc.sends-1 {
				t.Errorf("%d sends and %d backoffs, want %d and %d", sends, sleeps, tc.sends, tc.sends-1)
			}
		})
	}
}
