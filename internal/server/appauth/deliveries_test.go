package appauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestAPIErrorsBecomeTheKindsTheJobActsOn(t *testing.T) {
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	reset := now.Add(42 * time.Minute)
	retry := 90 * time.Second
	status := func(code int) *github.ErrorResponse {
		return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "GET", URL: &url.URL{}}}, Message: http.StatusText(code)}
	}
	tests := []struct {
		name      string
		err       error
		until     time.Time // a rate limit until then
		secondary bool
		transient bool
		is        error
	}{
		{name: "primary rate limit", err: &github.RateLimitError{Rate: github.Rate{Reset: github.Timestamp{Time: reset}}, Response: &http.Response{}}, until: reset},
		{name: "secondary with Retry-After", err: &github.AbuseRateLimitError{RetryAfter: &retry, Response: &http.Response{}}, until: now.Add(retry), secondary: true},
		{name: "secondary without Retry-After", err: &github.AbuseRateLimitError{Response: &http.Response{}}, until: now.Add(time.Minute), secondary: true},
		{name: "server error", err: status(502), transient: true},
		{name: "no answer", err: &url.Error{Op: "Get", URL: "x", Err: errors.New("connection refused")}, transient: true},
		{name: "not found", err: status(404), is: forge.ErrNotFound},
		{name: "validation failed", err: status(422), is: forge.ErrValidation},
		{name: "bad request", err: status(400), is: forge.ErrValidation},
		{name: "credentials refused", err: status(401)},
		{name: "cancelled", err: fmt.Errorf("get: %w", context.Canceled), is: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := apiError("GET /app/hook/deliveries", tt.err, now)
			var rl *forge.RateLimitError
			if got := errors.As(err, &rl); got != !tt.until.IsZero() || got && (!rl.Until.Equal(tt.until) || rl.Secondary != tt.secondary) {
				t.Errorf("rate limit: %v (%+v), want until %v secondary %v", got, rl, tt.until, tt.secondary)
			}
			var te *forge.TransientError
			if got := errors.As(err, &te); got != tt.transient {
				t.Errorf("transient = %v, want %v (%v)", got, tt.transient, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v is not %v", err, tt.is)
			}
			if tt.is == nil && (errors.Is(err, forge.ErrNotFound) || errors.Is(err, forge.ErrValidation)) {
				t.Errorf("%v reads as a refusal of this one request", err)
			}
		})
	}
}

func TestHookDeliveriesAgainstTheFake(t *testing.T) {
	gh := fakegithub.New(fakegithub.Options{})
	t.Cleanup(gh.Close)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.RegisterApp(77, "autopilot", &k.PublicKey); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Second)
	var ids []int64
	for i, code := range []int{200, 0, 503} {
		id, err := gh.RecordDelivery(fakegithub.HookDelivery{AppID: 77, GUID: fmt.Sprint("g", i), Event: "issues", Action: "labeled",
			StatusCode: code, DeliveredAt: at.Add(time.Duration(i) * time.Second), Redelivery: i == 2, InstallationID: 5, RepositoryID: 6})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	a, err := New(Config{AppID: 77, PrivateKey: pemKey, BaseURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	page, next, err := a.ListHookDeliveries(ctx, "", 2)
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page: %v, next %q, err %v", page, next, err)
	}
	newest := page[0]
	if newest.ID != ids[2] || newest.GUID != "g2" || newest.StatusCode != 503 || newest.Status != "Invalid HTTP Response: 503" ||
		!newest.Redelivery || newest.Event != "issues" || newest.Action != "labeled" || newest.InstallationID != 5 ||
		newest.RepositoryID != 6 || !newest.DeliveredAt.Equal(at.Add(2*time.Second)) || newest.Delivered() {
		t.Fatalf("newest delivery %+v", newest)
	}
	last, next, err := a.ListHookDeliveries(ctx, next, 2)
	if err != nil || len(last) != 1 || last[0].ID != ids[0] || next != "" || !last[0].Delivered() {
		t.Fatalf("last page %+v, next %q, err %v", last, next, err)
	}
	if err := a.RedeliverHookDelivery(ctx, ids[2]); err != nil {
		t.Fatalf("redeliver: %v", err)
	}
	if err := a.RedeliverHookDelivery(ctx, 1); !errors.Is(err, forge.ErrNotFound) {
		t.Fatalf("redeliver an unknown attempt: %v, want not found", err)
	}
	gh.Script("POST", "/app/hook/deliveries/*/attempts", fakegithub.Fail(503))
	var te *forge.TransientError
	if err := a.RedeliverHookDelivery(ctx, ids[1]); !errors.As(err, &te) {
		t.Fatalf("redeliver during an outage: %v, want a transient error", err)
	}
	if got := gh.RedeliveryRequests(); len(got) != 1 || got[0] != ids[2] {
		t.Fatalf("redelivery requests %v", got)
	}
}
