package pass

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/tasks"
)

// reads are the reads the node asks for itself, for the comments it is
// given: an author's permission when the engine needs it
// (engine.NeedsPerm), and a Jira tasks step's task files when a report
// declares none in its body. A comment that needs a read is held, and so
// is every event stepped after it (their order is kept), until the read's
// answer is stepped in (events.PermsRead, events.FilesRead).
type reads struct {
	// held are the events waiting, in order; the first waits for wait.
	held []events.Event
	wait events.QueryKind
	// asked: the read the first held event waits for was handed out.
	asked bool
	// perms are the permissions read this pass, by lower-case login.
	perms map[string]evidence.PermRead
	// files are the task directories read this pass.
	files map[string]events.FilesRead
	// declared are the comments whose declared tasks are resolved.
	declared map[int64]bool
	// heads are the PR heads read this pass (QPullHead), by number.
	heads map[int]events.PullHeadRead
	// waitPR and waitDir are what the first held event waits for.
	waitPR  int
	waitDir string
	// dirs are the repository directories listed this pass (QRepoDir).
	dirs map[string]events.DirRead
}

// admit applies ev, or holds it while an earlier event waits for a read
// or while it needs one itself.
func (n *Node) admit(ev events.Event, now time.Time) error {
	if len(n.rd.held) > 0 {
		n.rd.held = append(n.rd.held, ev)
		return nil
	}
	ev, wait, err := n.completeEvent(ev)
	if err != nil {
		return err
	}
	if wait != 0 {
		n.rd.held, n.rd.wait, n.rd.asked = []events.Event{ev}, wait, false
		return nil
	}
	if c, ok := ev.(events.Comment); ok && n.st != nil {
		// Declared tasks that would leave the state over one comment are
		// refused with what fits (engine.FitDeclaration), judged on the
		// state the report applies to.
		fit, note, err := engine.FitDeclaration(n.set, n.st, c, now, n.opt.Signed)
		if err != nil {
			return err
		}
		if note != "" {
			n.notes = append(n.notes, note)
		}
		ev = fit
	}
	if err := n.apply(ev, now); err != nil {
		return err
	}
	n.readForCheck(ev)
	return nil
}

// completeEvent fills in what ev needs from the reads made, and says
// which read it still waits for (0: none). A read that failed otherwise
// than "not found" ends the pass with the forge's error.
func (n *Node) completeEvent(ev events.Event) (events.Event, events.QueryKind, error) {
	switch e := ev.(type) {
	case events.Start:
		return n.pickFlow(e)
	case events.Comment:
		c, wait := n.complete(e)
		return c, wait, nil
	case events.Click:
		if !n.known(e.Perm, e.PermErr, e.Sender) {
			return e, events.QPerms, nil
		}
		e.Perm, e.PermErr = n.perm(e.Perm, e.PermErr, e.Sender)
		return e, 0, nil
	case events.Review:
		// The reviewer's permission, and the PR as it is now (the
		// payload's may be stale: a push since).
		if !n.known(e.Perm, e.PermErr, e.Reviewer) {
			return e, events.QPerms, nil
		}
		e.Perm, e.PermErr = n.perm(e.Perm, e.PermErr, e.Reviewer)
		h, ok, err := n.head(e.PR, "of a review")
		if err != nil {
			return e, 0, err
		}
		if !ok {
			return e, events.QPullHead, nil
		}
		if h.Fail == events.ReadOK {
			e.Pull = h.Pull
		}
		return e, 0, nil
	case events.PRLinked:
		if e.Edit == nil {
			return e, 0, nil
		}
		// Who wrote the description, and the description now.
		ed := *e.Edit
		if !n.known(ed.Perm, ed.PermErr, ed.Sender) {
			return e, events.QPerms, nil
		}
		ed.Perm, ed.PermErr = n.perm(ed.Perm, ed.PermErr, ed.Sender)
		h, ok, err := n.head(e.PR, "to check who linked it")
		if err != nil {
			return e, 0, err
		}
		if !ok {
			return e, events.QPullHead, nil
		}
		ed.Now = "" // not found: no description links it now
		if h.Fail == events.ReadOK {
			ed.Now = h.Pull.Body
		}
		e.Edit = &ed
		return e, 0, nil
	}
	return ev, 0, nil
}

// head is PR pr's head as read this pass. Not read yet: ok is false and
// the node waits for the read (QPullHead). A failed read other than not
// found is an error that ends the pass; why says what the read was for.
func (n *Node) head(pr int, why string) (h events.PullHeadRead, ok bool, err error) {
	h, ok = n.rd.heads[pr]
	if !ok {
		n.rd.waitPR = pr
		return h, false, nil
	}
	if h.Fail != events.ReadOK && h.Fail != events.ReadNotFound {
		return h, true, fmt.Errorf("read PR #%d %s: %w", pr, why, h.Err)
	}
	return h, true, nil
}

// known: a permission is given, or read this pass for login.
func (n *Node) known(p access.Level, failed bool, login string) bool {
	if p != "" || failed {
		return true
	}
	_, ok := n.rd.perms[strings.ToLower(login)]
	return ok
}

// perm is the permission given, else the one read for login.
func (n *Node) perm(p access.Level, failed bool, login string) (access.Level, bool) {
	if p != "" || failed {
		return p, failed
	}
	r := n.rd.perms[strings.ToLower(login)]
	return r.Perm, r.Err
}

// readForCheck asks for a PR linked or reviewed to be read for its check
// (QPullSeen), unless the engine reads it as evidence anyway (QCheckPR)
// or it was asked already.
func (n *Node) readForCheck(ev events.Event) {
	pr := 0
	switch e := ev.(type) {
	case events.PRLinked:
		if n.st != nil && e.PR != n.opt.Issue {
			pr = e.PR
		}
	case events.Review:
		if h, ok := n.rd.heads[e.PR]; ok && h.Fail == events.ReadOK {
			pr = e.PR
		}
	}
	if pr == 0 || n.Asks(events.QCheckPR, pr) || n.Asks(events.QPullSeen, pr) {
		return
	}
	n.queries = append(n.queries, events.Query{Kind: events.QPullSeen, PR: pr})
}

// seen takes a QPullSeen's answer: the PR as read is recorded for its
// check; one that is gone is skipped; any other failure ends the pass
// (Err names the PR).
func (n *Node) seen(ev events.PullSeenRead, now time.Time) error {
	switch ev.Fail {
	case events.ReadOK:
		return n.apply(events.PullSeen{Pull: ev.Pull}, now)
	case events.ReadNotFound:
		return nil
	}
	return ev.Err
}

// answered takes a read's answer and applies what waited for it.
func (n *Node) answered(ev any, now time.Time) error {
	switch ev := ev.(type) {
	case events.PermsRead:
		if n.rd.perms == nil {
			n.rd.perms = map[string]evidence.PermRead{}
		}
		for login, p := range ev.Perms {
			n.rd.perms[strings.ToLower(login)] = p
		}
	case events.FilesRead:
		if n.rd.files == nil {
			n.rd.files = map[string]events.FilesRead{}
		}
		n.rd.files[ev.Dir] = ev
	case events.PullHeadRead:
		if n.rd.heads == nil {
			n.rd.heads = map[int]events.PullHeadRead{}
		}
		n.rd.heads[ev.PR] = ev
	case events.PullSeenRead:
		return n.seen(ev, now)
	case events.DirRead:
		if n.rd.dirs == nil {
			n.rd.dirs = map[string]events.DirRead{}
		}
		n.rd.dirs[ev.Dir] = ev
	}
	held := n.rd.held
	n.rd.held, n.rd.wait, n.rd.asked = nil, 0, false
	for _, ev := range held {
		if err := n.admit(ev, now); err != nil {
			return err
		}
	}
	return nil
}

// complete fills in what the comment needs from the reads made, and says
// which read it still waits for (0: none).
func (n *Node) complete(c events.Comment) (events.Comment, events.QueryKind) {
	if n.opt.Posted != nil {
		// The gate open when the comment applies, which events held
		// before it may have moved.
		c.GatePostedAt = time.Time{}
		if n.st != nil && n.st.Gate != nil {
			c.GatePostedAt = n.opt.Posted[marker.Build(marker.Gate, n.st.Gate.ID)]
		}
	}
	if !n.permKnown(c) {
		p, ok := n.rd.perms[strings.ToLower(c.Author)]
		if !ok {
			return c, events.QPerms
		}
		c.Perm, c.PermErr = p.Perm, p.Err
	}
	if n.st == nil || n.rd.declared[c.ID] || c.Declared != nil || c.DeclaredErr != "" {
		return c, 0
	}
	var r grammar.Result
	if c.Reply != nil {
		r = *c.Reply
	} else {
		r = engine.Parse(c.Body)
	}
	if !engine.DeclaresTasks(r) {
		return c, 0
	}
	start := len(n.st.Tasks) + 1
	ts, err := tasks.ParseComment(c.Body, tasks.Options{Start: start})
	if dir := n.taskDir(); err == nil && len(ts) == 0 && dir != "" && engine.MaySupplyTaskFiles(c.Perm, n.set.AnswerPermission) {
		fr, ok := n.rd.files[dir]
		if !ok {
			return c, events.QTaskFiles
		}
		ts, err = n.fileTasks(fr, start)
	}
	if n.rd.declared == nil {
		n.rd.declared = map[int64]bool{}
	}
	n.rd.declared[c.ID] = true
	if err != nil {
		c.DeclaredErr = err.Error()
	} else {
		c.Declared = ts
	}
	return c, 0
}

// permKnown: the comment needs no permission read (none is needed, or
// its author's is given).
func (n *Node) permKnown(c events.Comment) bool {
	return c.Perm != "" || c.PermErr || !engine.NeedsPerm(c)
}

// taskDir is the task directory a report on the current step may declare
// (jira.task_files, on a step whose Jira role is "tasks"); "" if none.
func (n *Node) taskDir() string {
	cfg := n.set.Config
	if cfg == nil || cfg.Jira.TaskFiles == "" || n.st == nil {
		return ""
	}
	f := cfg.All[n.st.Flow]
	if f == nil {
		return ""
	}
	if st, _ := f.StepAt(n.st.Step); st.Jira != "tasks" {
		return ""
	}
	return cfg.Jira.TaskFiles
}

// fileTasks are the tasks the files read declare, numbered from start;
// files already declared (same title) are not declared twice.
func (n *Node) fileTasks(fr events.FilesRead, start int) ([]state.Task, error) {
	if fr.Fail != events.ReadOK {
		return nil, readError(fr.Err)
	}
	if len(fr.Files) == 0 {
		return nil, nil
	}
	ts, err := tasks.ParseFiles(fr.Files, tasks.Options{Start: start})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, t := range n.st.Tasks {
		seen[t.Title] = true
	}
	var out []state.Task
	for _, t := range ts {
		if !seen[t.Title] {
			out = append(out, t)
		}
	}
	return out, nil
}

type readError string

func (e readError) Error() string { return string(e) }

// readQuery is the read the first held event waits for, handed out once.
func (n *Node) readQuery() (events.Query, bool) {
	if n.rd.wait == 0 || n.rd.asked {
		return events.Query{}, false
	}
	n.rd.asked = true
	switch n.rd.wait {
	case events.QTaskFiles:
		return events.Query{Kind: events.QTaskFiles, Dir: n.taskDir()}, true
	case events.QPullHead:
		return events.Query{Kind: events.QPullHead, PR: n.rd.waitPR}, true
	case events.QRepoDir:
		return events.Query{Kind: events.QRepoDir, Dir: n.rd.waitDir}, true
	}
	// Every held comment's author whose permission is not read yet: one
	// round for all of them.
	q := events.Query{Kind: events.QPerms}
	seen := map[string]bool{}
	for _, ev := range n.rd.held {
		login := ""
		switch e := ev.(type) {
		case events.Comment:
			if !n.permKnown(e) {
				login = e.Author
			}
		case events.Click:
			if !n.known(e.Perm, e.PermErr, e.Sender) {
				login = e.Sender
			}
		case events.Review:
			if !n.known(e.Perm, e.PermErr, e.Reviewer) {
				login = e.Reviewer
			}
		case events.PRLinked:
			if e.Edit != nil && !n.known(e.Edit.Perm, e.Edit.PermErr, e.Edit.Sender) {
				login = e.Edit.Sender
			}
		}
		key := strings.ToLower(login)
		if login == "" || seen[key] {
			continue
		}
		if _, ok := n.rd.perms[key]; ok {
			continue
		}
		seen[key] = true
		q.Logins = append(q.Logins, login)
	}
	return q, true
}

// Prefetch are the reads to make before the thread is read, for the
// comment that triggered the pass (nil: none): its author's permission
// when the comment could act. Read then, the answer does not stand
// between the load and the write, so the load can stand in for the
// version re-read before it; it is stepped in (events.PermsRead) as soon
// as the node exists, and the node does not ask it again.
func Prefetch(c *events.Comment) []events.Query {
	if c == nil || c.Bot || !engine.NeedsPerm(*c) {
		return nil
	}
	return []events.Query{{Kind: events.QPerms, Logins: []string{c.Author}}}
}

// pickFlow picks a starting run's flow when the start names none (no flow
// label names a configured flow): the configured default, else detection
// from what the repository already has: a meta repository (.gitmodules,
// or _docs/_repo-config.yaml), existing code (anything besides the usual
// top files, or _docs/ without the meta marker), else greenfield. With
// several candidates none is picked: the run asks which.
func (n *Node) pickFlow(e events.Start) (events.Event, events.QueryKind, error) {
	if e.Flow != "" || e.Candidates != nil || n.set.Config == nil || n.st != nil {
		// A restart keeps its run's flow.
		return e, 0, nil
	}
	if d := n.set.Config.DefaultFlow; d != "" {
		e.Flow = d
		return e, 0, nil
	}
	top, wait, err := n.dir("")
	if wait != 0 || err != nil {
		return e, wait, err
	}
	hasDocs, hasSource, meta := false, false, false
	for _, name := range top {
		switch {
		case name == "_docs":
			hasDocs = true
		case name == ".gitmodules":
			meta = true
		case name == "README.md" || name == "LICENSE" || name == ".github" || name == ".gitignore" || strings.HasPrefix(name, "LICENSE"):
		default:
			hasSource = true
		}
	}
	if hasDocs {
		docs, wait, err := n.dir("_docs")
		if wait != 0 || err != nil {
			return e, wait, err
		}
		for _, name := range docs {
			if name == "_repo-config.yaml" {
				meta = true
			}
		}
	}
	var cands []string
	if meta {
		cands = append(cands, "meta-repo")
	}
	if hasSource || hasDocs && !meta {
		cands = append(cands, "existing-code")
	}
	if len(cands) == 0 {
		cands = append(cands, "greenfield")
	}
	if len(cands) == 1 {
		e.Flow = cands[0]
	} else {
		e.Candidates = cands
	}
	return e, 0, nil
}

// dir is directory d of the repository as listed this pass, or the read
// to wait for; a listing that failed ends the pass.
func (n *Node) dir(d string) ([]string, events.QueryKind, error) {
	r, ok := n.rd.dirs[d]
	if !ok {
		n.rd.waitDir = d
		return nil, events.QRepoDir, nil
	}
	if r.Fail != events.ReadOK {
		return nil, 0, fmt.Errorf("detect flow: %w", r.Err)
	}
	return r.Names, 0, nil
}
