package pass

import (
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
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
	perms map[string]events.PermRead
	// files are the task directories read this pass.
	files map[string]events.FilesRead
	// declared are the comments whose declared tasks are resolved.
	declared map[int64]bool
}

// admit applies ev, or holds it while an earlier event waits for a read
// or while it needs one itself.
func (n *Node) admit(ev events.Event, now time.Time) error {
	if len(n.rd.held) > 0 {
		n.rd.held = append(n.rd.held, ev)
		return nil
	}
	c, ok := ev.(events.Comment)
	if !ok {
		return n.apply(ev, now)
	}
	c, wait := n.complete(c)
	if wait != 0 {
		n.rd.held, n.rd.wait, n.rd.asked = []events.Event{c}, wait, false
		return nil
	}
	return n.apply(c, now)
}

// answered takes a read's answer and applies what waited for it.
func (n *Node) answered(ev any, now time.Time) error {
	switch ev := ev.(type) {
	case events.PermsRead:
		if n.rd.perms == nil {
			n.rd.perms = map[string]events.PermRead{}
		}
		for login, p := range ev.Perms {
			n.rd.perms[strings.ToLower(login)] = p
		}
	case events.FilesRead:
		if n.rd.files == nil {
			n.rd.files = map[string]events.FilesRead{}
		}
		n.rd.files[ev.Dir] = ev
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
	r := engine.Parse(c.Body)
	if c.Reply != nil {
		r = *c.Reply
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
	if n.rd.wait == events.QTaskFiles {
		return events.Query{Kind: events.QTaskFiles, Dir: n.taskDir()}, true
	}
	// Every held comment's author whose permission is not read yet: one
	// round for all of them.
	q := events.Query{Kind: events.QPerms}
	seen := map[string]bool{}
	for _, ev := range n.rd.held {
		c, ok := ev.(events.Comment)
		key := strings.ToLower(c.Author)
		if !ok || n.permKnown(c) || seen[key] {
			continue
		}
		if _, ok := n.rd.perms[key]; ok {
			continue
		}
		seen[key] = true
		q.Logins = append(q.Logins, c.Author)
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
