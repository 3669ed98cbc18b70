package dispatch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// TestClassify: a forge error, wrapped or not, reaches the engine as its
// class (the engine decides what the class means: engine.DispatchSent).
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want engine.ErrClass
	}{
		{nil, engine.ErrNone},
		{&forge.TransientError{Status: 502, Err: errors.New("bad gateway")}, engine.ErrTransient},
		{fmt.Errorf("read the default branch to dispatch at: %w", &forge.TransientError{Status: 504}), engine.ErrTransient},
		{&forge.RateLimitError{Until: time.Unix(0, 0), Secondary: true}, engine.ErrRateLimited},
		{errors.New("HTTP 422: no workflow_dispatch trigger"), engine.ErrRefused},
		{forge.ErrNotFound, engine.ErrRefused},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRefOnSandbox: a forge that cannot tell its default branch dispatches
// at main unless a ref is configured.
func TestRefOnSandbox(t *testing.T) {
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, time.Now)
	for ref, want := range map[string]string{"": "main", "release": "release"} {
		if got, err := Ref(context.Background(), sb, ref); err != nil || got != want {
			t.Errorf("Ref(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
}
