package prcheck

import (
	"context"
	"errors"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// TestClassify: a failed check run write reaches the engine as its class;
// a cancelled job makes any failure transient (engine.CheckWritten keeps
// the check pending).
func TestClassify(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	refused := errors.New("HTTP 403: Resource not accessible by integration")
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want engine.ErrClass
	}{
		{live, nil, engine.ErrNone},
		{live, &forge.TransientError{Status: 500}, engine.ErrTransient},
		{live, &forge.RateLimitError{Secondary: true}, engine.ErrRateLimited},
		{live, refused, engine.ErrRefused},
		{gone, refused, engine.ErrTransient},
	} {
		if got := classify(tc.ctx, tc.err); got != tc.want {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
