package tracker

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// IdemPrefix starts every idempotency key.
const IdemPrefix = "autopilot-"

// IdemKey returns the idempotency key of a task: stable for the same
// repository (case-insensitive), issue number and local task id, and safe as a
// Jira label (lower-case hex, no spaces). It is recorded in the state before
// the create and stored on the Jira issue as a label, so a lost response can
// be found again by search instead of being created twice.
func IdemKey(repo string, issue int, taskID string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s#%d/%s", strings.ToLower(repo), issue, taskID)))
	return IdemPrefix + hex.EncodeToString(sum[:])[:10]
}

var idemKeyRE = regexp.MustCompile(`^autopilot-[0-9a-f]{10}$`)

// ValidIdemKey reports whether s has the form IdemKey produces.
func ValidIdemKey(s string) bool { return idemKeyRE.MatchString(s) }

var jiraKeyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*-[1-9][0-9]*$`)

// IsJiraKey reports whether s looks like a Jira issue key such as "PROJ-12".
func IsJiraKey(s string) bool { return jiraKeyRE.MatchString(s) }
