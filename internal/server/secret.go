package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// SecretFingerprint is a short, non-reversible name of a webhook secret:
// the first 8 hex digits of HMAC-SHA256(secret, "autopilot-fingerprint").
// Replicas compare it to find one started with another WEBHOOK_SECRET,
// which would answer 401 to every delivery signed with the other.
func SecretFingerprint(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("autopilot-fingerprint"))
	return hex.EncodeToString(m.Sum(nil))[:8]
}

// secretCheckEvery is how often a replica records its fingerprint in Redis
// and compares it with the others'; a replica not seen for three periods
// is forgotten. A server reads it once, in New.
var secretCheckEvery = 30 * time.Second

// secretNoter is a store that compares webhook secret fingerprints
// across replicas (redisq.Store).
type secretNoter interface {
	NoteSecret(ctx context.Context, fingerprint string, ttl time.Duration) (map[string]int, error)
}

// secretStore is the first store that compares fingerprints, or nil.
func (s *Server) secretStore() secretNoter {
	for _, p := range s.pingers {
		if n, ok := p.(secretNoter); ok {
			return n
		}
	}
	return nil
}

// checkSecrets records this replica's fingerprint and compares it with
// those of the replicas sharing the Redis. A mismatch is logged as an
// error when it appears or changes, and shown by /readyz.
func (s *Server) checkSecrets(ctx context.Context, n secretNoter) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	seen, err := n.NoteSecret(ctx, s.secretFP, 3*s.secretEvery)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("could not compare the webhook secret with the other replicas'", "err", err)
		}
		return
	}
	delete(seen, s.secretFP)
	mismatch := ""
	if len(seen) > 0 {
		others := slices.Sorted(maps.Keys(seen))
		parts := make([]string, len(others))
		for i, fp := range others {
			parts[i] = fmt.Sprintf("%s (%d replicas)", fp, seen[fp])
		}
		mismatch = fmt.Sprintf("webhook secrets differ across the replicas sharing this Redis: this one's fingerprint is %s, others have %s; "+
			"each answers 401 to the deliveries signed with another's secret: set the same WEBHOOK_SECRET on every replica",
			s.secretFP, strings.Join(parts, ", "))
	}
	prev := s.secretMismatch.Swap(&mismatch)
	switch {
	case mismatch != "" && (prev == nil || *prev != mismatch):
		s.log.Error(mismatch, "webhook_secret_fingerprint", s.secretFP, "other_fingerprints", strings.Join(slices.Sorted(maps.Keys(seen)), ","))
	case mismatch == "" && prev != nil && *prev != "":
		s.log.Info("every replica sharing this Redis now uses the same webhook secret", "webhook_secret_fingerprint", s.secretFP)
	}
}

// secretTimer compares the fingerprints every secretCheckEvery until ctx
// ends.
func (s *Server) secretTimer(ctx context.Context, n secretNoter) {
	job.Every(ctx, s.secretEvery, func() { s.checkSecrets(ctx, n) })
}

// secretDetail is /readyz's line about the webhook secret.
func (s *Server) secretDetail() string {
	if m := s.secretMismatch.Load(); m != nil && *m != "" {
		return *m + "\n"
	}
	return "webhook secret fingerprint: " + s.secretFP + "\n"
}
