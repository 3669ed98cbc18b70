// Package store keeps the dashboard's rows (model.Row): in memory for one
// replica, or in Redis when REDIS_URL is set, so every replica's dashboard
// shows the passes of all. Updater is the appmode.Sink App mode calls at the
// end of every pass.
//
// A store keeps, per issue, the row of the highest state version it was
// given, and remembers the version at which a row was removed, so a late
// write from an older pass never brings back a closed issue. It must never
// call the GitHub API.
package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
)

// Store holds the rows.
type Store interface {
	// Put stores r unless a row (or a removal) of a higher version is
	// stored; false when it was refused as stale.
	Put(ctx context.Context, r model.Row) (bool, error)
	// Remove drops the row of key, remembering version.
	Remove(ctx context.Context, key string, version int64) error
	// Get returns the row of key.
	Get(ctx context.Context, key string) (model.Row, bool, error)
	// List returns every row, sorted by repository then issue; a row's
	// Timeline may be left out (Get has it).
	List(ctx context.Context) ([]model.Row, error)
	// Hold remembers the issue whose sweep pass the budget cut, until
	// h.Until (a hold already over is not kept); Remove forgets it.
	Hold(ctx context.Context, h model.Hold) error
	// Held returns the hold of key, if one is kept.
	Held(ctx context.Context, key string) (model.Hold, bool, error)
	// Release forgets the hold of key (a sweep pass of the issue runs).
	Release(ctx context.Context, key string) error
}

// Sort orders rows by repository, then issue number.
func Sort(rows []model.Row) {
	slices.SortFunc(rows, func(a, b model.Row) int {
		if c := strings.Compare(strings.ToLower(a.Repo), strings.ToLower(b.Repo)); c != 0 {
			return c
		}
		return a.Issue - b.Issue
	})
}

// Memory is a Store in process memory.
type Memory struct {
	mu       sync.RWMutex
	rows     map[string]model.Row
	versions map[string]int64
	holds    map[string]model.Hold
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{rows: map[string]model.Row{}, versions: map[string]int64{}, holds: map[string]model.Hold{}}
}

// Hold implements Store.
func (m *Memory) Hold(_ context.Context, h model.Hold) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.Until.After(time.Now()) {
		m.holds[h.Key()] = h
	}
	return nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.holds, key)
	return nil
}

// Held implements Store: a hold over by now is forgotten.
func (m *Memory) Held(_ context.Context, key string) (model.Hold, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.holds[key]
	if ok && !h.Until.After(time.Now()) {
		delete(m.holds, key)
		return model.Hold{}, false, nil
	}
	return h, ok, nil
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, r model.Row) (bool, error) {
	k := r.Key()
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.versions[k]; ok && v > r.Version {
		return false, nil
	}
	m.rows[k], m.versions[k] = r, r.Version
	return true, nil
}

// Remove implements Store.
func (m *Memory) Remove(_ context.Context, key string, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, key)
	delete(m.holds, key)
	if version > m.versions[key] {
		m.versions[key] = version
	}
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) (model.Row, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.rows[key]
	return r, ok, nil
}

// List implements Store.
func (m *Memory) List(context.Context) ([]model.Row, error) {
	m.mu.RLock()
	out := make([]model.Row, 0, len(m.rows))
	for _, r := range m.rows {
		out = append(out, r)
	}
	m.mu.RUnlock()
	Sort(out)
	return out, nil
}

// Updater is the appmode.Sink that keeps a Store up to date: the row of
// each pass's state, or its removal when the issue closed, lost its label
// or has no run. A store error is logged, never returned: the dashboard
// never fails a pass.
type Updater struct {
	Store Store
	Log   *slog.Logger
	// WebURL is GitHub's web root ("https://github.com", or a GHES host),
	// for the issue links of passes that did not report one.
	WebURL string
}

// Passed implements appmode.Sink.
func (u Updater) Passed(ctx context.Context, p model.Pass) {
	log := u.Log
	if log == nil {
		log = slog.Default()
	}
	if p.URL == "" && u.WebURL != "" {
		p.URL = fmt.Sprintf("%s/%s/issues/%d", strings.TrimRight(u.WebURL, "/"), p.Repo, p.Issue)
	}
	row, ok := model.Build(p)
	var err error
	if ok {
		_, err = u.Store.Put(ctx, row)
	} else {
		var v int64
		if p.State != nil {
			v = p.State.Version
		}
		err = u.Store.Remove(ctx, model.Key(p.Repo, p.Issue), v)
	}
	if err != nil {
		log.Warn("dashboard: could not record the pass", "repo", p.Repo, "issue", p.Issue, "err", err)
	}
}
