package reconcile

import (
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
)

// The reads the engine asks for the comments it holds (pass.Node): the
// carrier performs each and steps the answer in; it decides nothing about
// what to read.

// readPerms answers the node's QPerms: each login's permission (once per
// pass, comments.Perms).
func (ru *run) readPerms(q events.Query) error {
	ev, err := ru.permsRead(q)
	if err != nil {
		return err
	}
	return ru.step(ev)
}

// permsRead reads the permissions q asks. Refused credentials end the
// pass (App mode mints a new token); any other failure is kept in the
// answer, and the engine fails closed on it.
func (ru *run) permsRead(q events.Query) (events.PermsRead, error) {
	for _, login := range q.Logins {
		if _, err := ru.perm(login); errors.Is(err, forge.ErrUnauthorized) {
			return events.PermsRead{}, fmt.Errorf("permission of @%s: %w", login, err)
		}
	}
	return q.ReadPerms(ru.perm), nil
}

// prefetch makes the reads the engine wants before the thread is read
// (pass.Prefetch: the permission of the trigger comment's author, when
// the comment could act), so the load can stand in for the version
// re-read before the write (loadIsReread); their answers are stepped in
// once the node exists.
func (ru *run) prefetch(t route.Trigger) ([]events.PermsRead, error) {
	var c *events.Comment
	if t.Comment != nil && !ru.r.trusted(*t.Comment) {
		tc := t.Comment
		c = &events.Comment{ID: tc.ID, Author: tc.Author.Login, Bot: tc.Author.IsBot(), Body: tc.Body}
	}
	var out []events.PermsRead
	for _, q := range pass.Prefetch(c) {
		ev, err := ru.permsRead(q)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// readTaskFiles answers the node's QTaskFiles: the markdown files of dir
// (repofiles.ReadTaskFiles), or the class of the failure.
func (ru *run) readTaskFiles(dir string) error {
	files, err := repofiles.ReadTaskFiles(ru.ctx, ru.r.o.Forge, dir)
	ev := events.FilesRead{Dir: dir, Files: files}
	if err != nil {
		ev.Fail, ev.Err = readFail(err), err.Error()
	}
	return ru.step(ev)
}

// readFail is the class of a read's error.
func readFail(err error) events.ReadFail {
	var rl *forge.RateLimitError
	switch {
	case err == nil:
		return events.ReadOK
	case errors.Is(err, forge.ErrNotFound):
		return events.ReadNotFound
	case errors.As(err, &rl):
		return events.ReadRateLimited
	case errors.Is(err, forge.ErrForbidden), errors.Is(err, forge.ErrUnauthorized):
		return events.ReadForbidden
	}
	return events.ReadTransient
}

// step steps a read's answer into the node.
func (ru *run) step(ev any) error { return ru.node.Step(ev, ru.r.o.Now()) }

// readPullHead answers the node's QPullHead: PR n as it is now (read once
// per pass, getPull), its head facts (prcheck.Head).
func (ru *run) readPullHead(n int) error {
	ev := events.PullHeadRead{PR: n}
	if pr, err := ru.getPull(n); err != nil {
		ev.Fail, ev.Err = readFail(err), err
	} else {
		ev.Pull = ru.pullHead(pr)
	}
	return ru.step(ev)
}

// readPullSeen answers the node's QPullSeen: PR n, its reviews and the
// permissions its trust needs (prcheck.Facts), for its check.
func (ru *run) readPullSeen(n int) error {
	ev := events.PullSeenRead{PR: n}
	pr, err := ru.getPull(n)
	if err != nil {
		err = fmt.Errorf("read PR #%d: %w", n, err)
	} else {
		var rs []forge.Review
		if rs, err = ru.r.o.Forge.ListReviews(ru.ctx, n); err != nil {
			err = fmt.Errorf("reviews of PR #%d: %w", n, err)
		} else {
			ev.Pull = ru.pullFacts(pr, rs)
		}
	}
	if err != nil {
		ev.Fail, ev.Err = readFail(err), err
	}
	return ru.step(ev)
}

// readDir answers the node's QRepoDir: the names under dir of the
// repository (repofiles.ReadDir), for flow detection.
func (ru *run) readDir(dir string) error {
	names, err := repofiles.ReadDir(ru.ctx, ru.r.o.Forge, dir)
	ev := events.DirRead{Dir: dir, Names: names}
	if err != nil {
		ev.Fail, ev.Err = readFail(err), err
	}
	return ru.step(ev)
}
