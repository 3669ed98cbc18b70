package server

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretFingerprintIsShortAndNotTheSecret: the fingerprint is the
// first 8 hex digits of HMAC-SHA256(secret, "autopilot-fingerprint").
func TestSecretFingerprintIsShortAndNotTheSecret(t *testing.T) {
	// printf autopilot-fingerprint | openssl dgst -sha256 -hmac 'test webhook secret'
	const want = "120ee6bf"
	if got := SecretFingerprint(testSecret); got != want {
		t.Fatalf("SecretFingerprint = %q, want %q", got, want)
	}
	if SecretFingerprint("another") == SecretFingerprint(testSecret) {
		t.Fatal("two secrets, one fingerprint")
	}
}

// TestReplicasWithDifferentSecretsSaySo: replicas sharing a Redis compare
// their webhook secrets' fingerprints: each logs its own at start and
// shows it in /readyz; a replica started with another secret logs an error
// at start naming both fingerprints, and /readyz shows the mismatch on
// every replica once it has compared again. The secret itself never shows.
func TestReplicasWithDifferentSecretsSaySo(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	defer setSecretCheckEvery(100 * time.Millisecond)()
	logs := func() (*syncBuffer, *slog.Logger) {
		b := &syncBuffer{}
		return b, slog.New(slog.NewTextHandler(b, nil))
	}
	replica := func(secret string, log *slog.Logger) running {
		cfg := testConfig()
		cfg.WebhookSecret = secret
		store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL})
		_, srv := start(t, cfg, Deps{Processor: newRecorder(), Deduper: store, Locker: store, Queue: store, Logger: log})
		return srv
	}
	la, loga := logs()
	a := replica(testSecret, loga)
	fa, fb := SecretFingerprint(testSecret), SecretFingerprint("a rotated secret")
	eventually(t, "the start log line", func() bool { return strings.Contains(la.String(), "serving webhooks") })
	if !strings.Contains(la.String(), fa) {
		t.Errorf("start log lacks the fingerprint %s:\n%s", fa, la)
	}
	if _, body := get(t, a.url, "/readyz"); !strings.Contains(body, fa) || strings.Contains(body, "differ") {
		t.Errorf("/readyz of a lone replica = %q, want its fingerprint %s and no mismatch", body, fa)
	}
	replica(testSecret, nil) // a second replica with the same secret changes nothing
	if _, body := get(t, a.url, "/readyz"); strings.Contains(body, "differ") {
		t.Errorf("/readyz with two replicas of one secret = %q", body)
	}
	lb, logb := logs()
	b := replica("a rotated secret", logb)
	eventually(t, "the odd replica's start log line", func() bool { return strings.Contains(lb.String(), "serving webhooks") })
	if out := lb.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, fa) || !strings.Contains(out, fb) {
		t.Errorf("the odd replica's start log does not say that the secrets differ (%s, %s):\n%s", fa, fb, out)
	}
	for name, r := range map[string]running{"first": a, "odd": b} {
		eventually(t, name+" /readyz showing the mismatch", func() bool {
			_, body := get(t, r.url, "/readyz")
			return strings.Contains(body, "differ") && strings.Contains(body, fa) && strings.Contains(body, fb)
		})
	}
	for _, out := range []string{la.String(), lb.String()} {
		if strings.Contains(out, testSecret) || strings.Contains(out, "a rotated secret") {
			t.Fatal("a log line shows the secret")
		}
	}
}

// setSecretCheckEvery shortens the secret comparison's period for the
// servers built next (each reads it once, in New); the returned func
// restores it.
func setSecretCheckEvery(d time.Duration) func() {
	old := secretCheckEvery
	secretCheckEvery = d
	return func() { secretCheckEvery = old }
}
