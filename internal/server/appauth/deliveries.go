package appauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
)

// secondaryWait is how long a secondary rate limit without Retry-After is
// sat out: GitHub asks for "at least one minute".
const secondaryWait = time.Minute

var _ redelivery.API = (*Auth)(nil)

// ListHookDeliveries lists one page of the App's webhook deliveries, newest
// first (GET /app/hook/deliveries with the App's JWT), from cursor ("" for
// the first page), and returns the next page's cursor from the Link header
// ("" on the last page). It implements redelivery.API.
func (a *Auth) ListHookDeliveries(ctx context.Context, cursor string, perPage int) ([]redelivery.Delivery, string, error) {
	const op = "GET /app/hook/deliveries"
	page, resp, err := a.gh.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{Cursor: cursor, PerPage: perPage})
	if err != nil {
		return nil, "", apiError(op, err, a.now())
	}
	out := make([]redelivery.Delivery, 0, len(page))
	for _, d := range page {
		out = append(out, redelivery.Delivery{
			ID:             d.GetID(),
			GUID:           d.GetGUID(),
			DeliveredAt:    d.GetDeliveredAt().Time,
			Redelivery:     d.GetRedelivery(),
			Status:         d.GetStatus(),
			StatusCode:     d.GetStatusCode(),
			Event:          d.GetEvent(),
			Action:         d.GetAction(),
			InstallationID: d.GetInstallationID(),
			RepositoryID:   d.GetRepositoryID(),
		})
	}
	return out, resp.Cursor, nil
}

// RedeliverHookDelivery asks GitHub to deliver attempt id's payload again
// (POST /app/hook/deliveries/{id}/attempts with the App's JWT; GitHub
// answers 202). It implements redelivery.API.
func (a *Auth) RedeliverHookDelivery(ctx context.Context, id int64) error {
	op := fmt.Sprintf("POST /app/hook/deliveries/%d/attempts", id)
	_, _, err := a.gh.Apps.RedeliverHookDelivery(ctx, id)
	var accepted *github.AcceptedError
	if err == nil || errors.As(err, &accepted) {
		return nil
	}
	return apiError(op, err, a.now())
}

// apiError turns a go-github error into the forge error kinds callers act
// on: *forge.RateLimitError (wait until Until), *forge.TransientError (5xx,
// network: try again later), forge.ErrNotFound and forge.ErrValidation (this
// request will not succeed), or the error as it is.
func apiError(op string, err error, now time.Time) error {
	var rate *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var resp *github.ErrorResponse
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	case errors.As(err, &rate):
		return fmt.Errorf("%s: %w", op, &forge.RateLimitError{Until: rate.Rate.Reset.Time, Msg: rate.Message})
	case errors.As(err, &abuse):
		until := now.Add(secondaryWait)
		if abuse.RetryAfter != nil {
			until = now.Add(*abuse.RetryAfter)
		}
		return fmt.Errorf("%s: %w", op, &forge.RateLimitError{Until: until, Secondary: true, Msg: abuse.Message})
	case errors.As(err, &resp) && resp.Response != nil:
		switch code := resp.Response.StatusCode; {
		case code >= 500:
			return fmt.Errorf("%s: %w", op, &forge.TransientError{Status: code, Err: err})
		case code == http.StatusNotFound:
			return fmt.Errorf("%s: %w: %w", op, forge.ErrNotFound, err)
		case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
			return fmt.Errorf("%s: %w: %w", op, forge.ErrValidation, err)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	// No answer at all: connection refused, reset, timed out.
	return fmt.Errorf("%s: %w", op, &forge.TransientError{Err: err})
}
