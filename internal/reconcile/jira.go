package reconcile

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// jira runs the outbox when the engine asked for it or tasks wait.
func (ru *run) jira() error {
	want := false
	var rest []state.Effect
	for _, e := range ru.effects {
		if e.Kind == engine.EffJiraSync {
			want = true
			continue
		}
		rest = append(rest, e)
	}
	ru.effects = rest
	s := ru.st
	tr := ru.tracker
	if s == nil || tr == nil || s.JiraEnabled == nil || len(s.Tasks) == 0 {
		if want && tr == nil && s != nil {
			ru.notes = append(ru.notes, "jira sync requested but Jira is not configured")
		}
		return nil
	}
	if !*s.JiraEnabled && !want {
		return nil
	}
	if s.JiraNote == "paused: authentication failed" && !want {
		return nil
	}
	if !want && engine.PendingCount(s) == 0 && !ru.sweeping() {
		return nil
	}
	if ru.r.o.DryRun {
		ru.r.o.Print(fmt.Sprintf("dry-run: would sync %d task(s) with Jira", engine.PendingCount(s)))
		return nil
	}
	if want && !*s.JiraEnabled {
		t := true
		s.JiraEnabled = &t
		ru.changed = true
	}
	opts := tracker.SyncOptions{Now: ru.r.o.Now, Sleep: ru.r.o.JiraSleep, MaxWait: ru.r.o.JiraMaxWait, NotBefore: s.JiraRetryAt,
		SearchLag: time.Duration(ru.set.Config.Jira.SearchLag), Persist: func(ts []state.Task) error {
			if err := ru.apply(engine.JiraSynced{Tasks: ts}); err != nil {
				return err
			}
			return ru.write()
		}}
	res, err := tracker.Sync(ru.ctx, tr, s.Tasks, opts)
	if err != nil {
		return fmt.Errorf("jira sync of #%d: %w", ru.number, err)
	}
	note := ""
	if res.Waiting > 0 {
		note = fmt.Sprintf("Jira sync pending (%d)", res.Waiting)
		if res.Note != "" {
			note += ": " + res.Note
		}
	}
	before := ru.st.Version
	if err := ru.apply(engine.JiraSynced{Tasks: res.Tasks, Paused: res.Paused, Note: note, RetryAt: res.RetryAt}); err != nil {
		return err
	}
	if ru.changed && (ru.st.Version == before) {
		return ru.write()
	}
	return nil
}

func (ru *run) sweeping() bool { return false }
