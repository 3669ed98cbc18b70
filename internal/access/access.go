// Package access holds the repository permission levels GitHub reports
// (none, read, triage, write, maintain, admin) and their order.
//
// It is a leaf: the engine, the config checks and every adapter share these
// types without the pure packages importing the forge. It must never import
// anything beyond the standard library's pure packages, and never do I/O.
package access

import "fmt"

// Level is a repository permission level from the collaborator permission
// API ("none", "read", "triage", "write", "maintain", "admin").
type Level string

// Permission levels, lowest first.
const (
	None     Level = "none"
	Read     Level = "read"
	Triage   Level = "triage"
	Write    Level = "write"
	Maintain Level = "maintain"
	Admin    Level = "admin"
)

var rank = map[Level]int{None: 0, Read: 1, Triage: 2, Write: 3, Maintain: 4, Admin: 5}

// Parse validates a permission name.
func Parse(s string) (Level, error) {
	p := Level(s)
	if _, ok := rank[p]; !ok {
		return "", fmt.Errorf("unknown permission %q (want none, read, triage, write, maintain or admin)", s)
	}
	return p, nil
}

// AtLeast reports whether p grants at least min. Unknown values grant nothing.
func (p Level) AtLeast(min Level) bool {
	r, ok := rank[p]
	if !ok {
		return false
	}
	return r >= rank[min]
}
