package trackersync

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Options are the carrier's side of one sync or close: the clock, how to
// wait and to persist, and the bounds handed to the rules
// (tasksync.Options). Zero values take the defaults.
type Options struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Sleep waits; default a timer that honours ctx.
	Sleep func(context.Context, time.Duration) error
	// Rand returns a number in [0, 1) for backoff jitter; default math/rand/v2.
	Rand func() float64
	// Persist writes the tasks to the state before creates are sent; the
	// sync sends nothing if it fails. Required when there is anything to
	// create.
	Persist func([]state.Task) error
	// NotBefore, SearchLag, MaxWait, Attempts, Backoff, Name: see
	// tasksync.Options.
	NotBefore time.Time
	SearchLag time.Duration
	MaxWait   time.Duration
	Attempts  int
	Backoff   time.Duration
	Name      string
	// Caps are the tracker's registered capabilities; they override the
	// bounds above (tasksync.Caps.Bound).
	Caps tasksync.Caps
}

func (o Options) rules(tr any) tasksync.Options {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return PortCaps(tr, o.Caps).Bound(tasksync.Options{
		Name: o.Name, Now: now(), NotBefore: o.NotBefore, SearchLag: o.SearchLag, MaxWait: o.MaxWait,
		Attempts: o.Attempts, Backoff: o.Backoff,
	})
}

// executor performs the ops the rules name against one tracker's port,
// one by one, and turns every answer into a tasksync.Outcome. It decides
// nothing.
type executor struct {
	o    Options
	port any
	name string
}

// Perform performs one op the engine handed out (pass.TrackerOp) against
// port, the tracker (tracker.Tracker, and tracker.Closer or
// tracker.DependencyLinker for the ops that need them), and returns its
// answer as the rules read it: the port's error mapped by
// tracker.Classify. o gives the clock, the wait and the jitter; a Persist
// is the engine's own and is never performed here.
func Perform(ctx context.Context, port any, op tasksync.Op, o Options) tasksync.Outcome {
	x := newExecutor(o)
	x.port = port
	return x.perform(ctx, op)
}

func newExecutor(o Options) *executor {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	name := o.Caps.Bound(tasksync.Options{Name: o.Name}).Name
	if name == "" {
		name = "Tracker"
	}
	return &executor{o: o, name: name}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// refusal classifies err. An answer keeps its class also when ctx ended
// meanwhile (a 422 item is failed, a gone issue recorded); only an error
// that is ctx's own cancellation is Canceled.
func (x *executor) refusal(ctx context.Context, err error) *tasksync.Refusal {
	r := tracker.Classify(err, x.name)
	if r != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		r.Class, r.Msg = tasksync.Canceled, ctx.Err().Error()
	}
	return r
}

func (x *executor) perform(ctx context.Context, op tasksync.Op) tasksync.Outcome {
	var out tasksync.Outcome
	var err error
	switch op := op.(type) {
	case tasksync.Wait:
		if err := x.o.Sleep(ctx, op.D); err != nil {
			out.Err = &tasksync.Refusal{Class: tasksync.Canceled, Msg: err.Error()}
		}
	case tasksync.Persist:
		if x.o.Persist == nil {
			out.Failed = errors.New("tracker sync: Options.Persist is required before creating issues")
		} else {
			out.Failed = x.o.Persist(op.Tasks)
		}
	case tasksync.Lookup:
		var found map[string]tracker.Issue
		found, err = x.port.(tracker.Tracker).FindByIdemKeys(ctx, op.IdemKeys)
		out.Found = issues(found)
	case tasksync.ReadStatuses:
		var found map[string]tracker.Issue
		found, err = x.port.(tracker.Tracker).Statuses(ctx, op.Keys)
		out.Found = issues(found)
	case tasksync.Create:
		items := make([]tracker.Item, len(op.Items))
		for i, it := range op.Items {
			items[i] = tracker.Item(it)
		}
		var res []tracker.CreateResult
		res, err = x.port.(tracker.Tracker).CreateBulk(ctx, items)
		for _, r := range res {
			out.Results = append(out.Results, tasksync.ItemResult{IdemKey: r.IdemKey, Issue: issue(r.Issue), Err: x.refusal(ctx, r.Err)})
		}
	case tasksync.LinkDep:
		err = x.port.(tracker.DependencyLinker).LinkDependency(ctx, op.Key, op.Blocker)
	case tasksync.CloseIssue:
		err = x.port.(tracker.Closer).CloseIssue(ctx, op.Key)
	case tasksync.Recall:
		out.Extras = extras(x.port)
	}
	out.Err = firstRefusal(out.Err, x.refusal(ctx, err))
	out.At = x.o.Now()
	if out.Err != nil && out.Err.Class == tasksync.Transient {
		// Only a transient answer can lead to a backoff, the one use of
		// jitter: drawing it for every op would shift a sequence of Rand.
		out.Jitter = x.o.Rand()
	}
	return out
}

func firstRefusal(a, b *tasksync.Refusal) *tasksync.Refusal {
	if a != nil {
		return a
	}
	return b
}

func issue(is tracker.Issue) tasksync.Issue {
	return tasksync.Issue{Key: is.Key, Status: is.Status, Done: is.Done, URL: is.URL, Gone: is.Gone, Remark: is.Remark}
}

func issues(in map[string]tracker.Issue) map[string]tasksync.Issue {
	if in == nil {
		return nil
	}
	out := make(map[string]tasksync.Issue, len(in))
	for k, is := range in {
		out[k] = issue(is)
	}
	return out
}

// extras reads what the tracker remembers across calls.
func extras(tr any) tasksync.Extras {
	var x tasksync.Extras
	if r, ok := tr.(tracker.Remarker); ok {
		x.Remarks = r.Remarks()
	}
	if l, ok := tr.(tracker.Limiter); ok {
		x.LimitedUntil = l.LimitedUntil()
	}
	return x
}

// Outbox runs the task outbox (tasksync.Sync) against tr alone, outside
// a pass: the harness the ports' own tests drive them with (a pass runs
// the machine in the engine, engine/pass). Its Persist is o.Persist.
// Tracker trouble never fails it; it returns an error only for bad input
// (a task without a usable idempotency key) or a Persist that failed,
// and then nothing was sent after the failure.
func Outbox(ctx context.Context, tr tracker.Tracker, tasks []state.Task, o Options) (tasksync.Result, error) {
	x := newExecutor(o)
	x.port = tr
	m, err := tasksync.NewSync(tasks, o.rules(tr))
	if err != nil {
		return m.Result(tasksync.Extras{}), err
	}
	for op := m.Next(); op != nil; op = m.Next() {
		m.Apply(x.perform(ctx, op))
	}
	return m.Result(x.perform(ctx, tasksync.Recall{}).Extras), m.Err()
}

// CloseAll runs the close policy (tasksync.Close) against c alone,
// outside a pass (the ports' tests' harness, as Outbox). It never fails.
func CloseAll(ctx context.Context, c tracker.Closer, tasks []state.Task, o Options) tasksync.CloseResult {
	x := newExecutor(o)
	x.port = c
	m := tasksync.NewClose(tasks, o.rules(c))
	for op := m.Next(); op != nil; op = m.Next() {
		m.Apply(x.perform(ctx, op))
	}
	return m.Result(x.perform(ctx, tasksync.Recall{}).Extras)
}
