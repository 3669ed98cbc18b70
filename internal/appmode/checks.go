package appmode

import (
	"context"
	"errors"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// CreateCheckRun implements forge.CheckWriter by passing the PR check on
// to the wrapped forge (the App's installation client).
func (v *view) CreateCheckRun(ctx context.Context, c forge.CheckRunOut) (int64, error) {
	cw, ok := v.Forge.(forge.CheckWriter)
	if !ok {
		return 0, errors.New("this forge cannot write check runs")
	}
	return cw.CreateCheckRun(ctx, c)
}
