package events

// The reads a pass asks for itself (pass.Node) and the events that answer
// them. The node asks each read when, and only when, an event it holds
// needs it; the carrier performs the read and steps the answer in. The
// answers are the node's events (like pass.ThreadRead), not the engine's:
// engine.Apply never sees them.

import (
	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

const (
	// QTaskFiles: read the task files of directory Query.Dir (a report
	// on a Jira "tasks" step declared no tasks in its body); answer
	// FilesRead.
	QTaskFiles QueryKind = QTrackerClose + 1 + iota
	// QPullHead: read linked PR Query.PR as it is now (a review's PR,
	// the description of a PR whose link an edit vouches for); answer
	// PullHeadRead.
	QPullHead
	// QPullSeen: read linked PR Query.PR with its reviews and the
	// permissions its trust needs, for its check (a PR linked or reviewed
	// that no evidence read covers); answer PullSeenRead.
	QPullSeen
	// QRepoDir: list the names directly under directory Query.Dir of the
	// repository ("": its top), for flow detection (a run starts with no
	// flow label and no default flow); answer DirRead.
	QRepoDir
)

var readKindNames = map[QueryKind]string{QTaskFiles: "task-files", QPullHead: "pull-head", QPullSeen: "pull-seen", QRepoDir: "repo-dir"}

// ReadFail is the class of a read that failed, as the carrier maps the
// forge's error.
type ReadFail int

const (
	// ReadOK: the read answered.
	ReadOK ReadFail = iota
	// ReadNotFound: what was read is not there (404).
	ReadNotFound
	// ReadForbidden: the credentials may not read it (403).
	ReadForbidden
	// ReadRateLimited: the API asked to wait.
	ReadRateLimited
	// ReadTransient: any other failure (network, 5xx); a later pass may
	// read it.
	ReadTransient
)

func (f ReadFail) String() string {
	switch f {
	case ReadOK:
		return "ok"
	case ReadNotFound:
		return "not-found"
	case ReadForbidden:
		return "forbidden"
	case ReadRateLimited:
		return "rate-limited"
	case ReadTransient:
		return "transient"
	}
	return "read-fail(?)"
}

// PermsRead answers a QPerms the node asked itself (Query.Then nil): each
// login's permission, by login as asked; a failed lookup is kept as
// evidence.PermRead.Err (fail closed).
type PermsRead struct {
	Perms map[string]evidence.PermRead
}

// FilesRead answers a QTaskFiles: the directory's markdown files by path
// (nil: none, or the directory is not there). Fail and Err say why the
// read failed; Err is the message the report's refusal quotes.
type FilesRead struct {
	Dir   string
	Files map[string]string
	Fail  ReadFail
	Err   string
}

// ReadPerms answers a QPerms the node asked itself: each login's
// permission as look reads it; a failed lookup is kept as evidence.PermRead.Err.
func (q Query) ReadPerms(look func(login string) (access.Level, error)) PermsRead {
	perms := make(map[string]evidence.PermRead, len(q.Logins))
	for _, login := range q.Logins {
		p, err := look(login)
		perms[login] = evidence.PermRead{Perm: p, Err: err != nil}
	}
	return PermsRead{Perms: perms}
}

// PullHeadRead answers a QPullHead: the PR's head facts (no permission
// lookups), or why the read failed; Err is the forge's error (a pass that
// needs the PR ends with it, unless the PR is not found).
type PullHeadRead struct {
	PR   int
	Pull *evidence.PullFacts
	Fail ReadFail
	Err  error
}

// PullSeenRead answers a QPullSeen: the PR's trust facts (author
// permission, approvals), or why the read failed.
type PullSeenRead struct {
	PR   int
	Pull *evidence.PullFacts
	Fail ReadFail
	Err  error
}

// DirRead answers a QRepoDir: the names under Dir (nil: none, or no such
// directory, or a forge that cannot list files), or why the read failed.
type DirRead struct {
	Dir   string
	Names []string
	Fail  ReadFail
	Err   error
}
