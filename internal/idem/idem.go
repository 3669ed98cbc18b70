// Package idem makes the idempotency keys recorded in the state before a
// tracker create and stored on the created issue, so a lost response is found
// again by search instead of being created twice.
//
// It is a leaf shared by the engine and the tracker adapters: no I/O, no
// imports beyond pure standard packages.
package idem

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Prefix starts every idempotency key.
const Prefix = "autopilot-"

// Key returns the idempotency key of a task: stable for the same repository
// (case-insensitive), issue number and local task id, and safe as a Jira
// label (lower-case hex, no spaces).
func Key(repo string, issue int, taskID string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s#%d/%s", strings.ToLower(repo), issue, taskID)))
	return Prefix + hex.EncodeToString(sum[:])[:10]
}

var keyRE = regexp.MustCompile(`^autopilot-[0-9a-f]{10}$`)

// Valid reports whether s has the form Key produces.
func Valid(s string) bool { return keyRE.MatchString(s) }
