package loadtest

import (
	"context"
	"sync"
	"time"
)

// simGitHub stands in for GitHub's REST API in the load simulation: every
// call takes the simulated latency, and the answer follows GitHub's rules
// per installation (docs.github.com, "Rate limits for the REST API"):
//
//   - primary: 5,000 requests an hour per installation; a conditional
//     request answered 304 is not charged;
//   - secondary: at most 100 requests in flight, 900 points a minute (a
//     read 1, a write 5), 80 content-creating requests a minute and 500
//     an hour;
//   - a conditional read of a resource unchanged since the caller's
//     replica last read it is answered 304 (each replica keeps its own
//     ETags, as the client does today).
//
// It counts what it answered; it never fails a job (a limit answer is
// counted, and the job goes on as the bot does after backing off).
type simGitHub struct {
	perRequest time.Duration

	mu   sync.Mutex
	inst map[int64]*instUse
	// version of each resource (bumped by every write to it and by the
	// comments GitHub receives), and each replica's ETags.
	version map[string]int
	etags   []map[string]int
	// what was answered
	calls, notModified, primary, secondary int
	byKind                                 map[string]*kindCalls
}

// GitHub's limits per installation.
const (
	primaryPerHour        = 5000
	secondaryConcurrent   = 100
	secondaryPointsMinute = 900
	contentPerMinute      = 80
	contentPerHour        = 500
)

// instUse is one installation's use of its limits.
type instUse struct {
	hour           int // requests charged this hour (the run is shorter)
	limited        int // limit answers it got
	created        int // content created this hour
	inFlight       int
	minute         time.Time // start of the current minute window
	points, writes int       // in that window
}

// kindCalls counts one event kind's jobs and their calls.
type kindCalls struct {
	jobs, calls, notModified int
}

// call is one request a job makes.
type call struct {
	write    bool   // POST, PATCH, PUT, DELETE
	creates  bool   // creates content (a comment): the 80-a-minute limit
	resource string // what it reads or writes, for ETags and versions
}

func newSimGitHub(perRequest time.Duration, replicas int) *simGitHub {
	g := &simGitHub{perRequest: perRequest, inst: map[int64]*instUse{}, version: map[string]int{},
		byKind: map[string]*kindCalls{}}
	for range replicas {
		g.etags = append(g.etags, map[string]int{})
	}
	return g
}

// touch records a change GitHub made itself (a comment a person posted).
func (g *simGitHub) touch(resource string) {
	g.mu.Lock()
	g.version[resource]++
	g.mu.Unlock()
}

// job runs one job's calls for installation inst from replica r, one after
// another, each taking the simulated latency.
func (g *simGitHub) job(ctx context.Context, r int, inst int64, kind string, calls []call) error {
	var done kindCalls
	for _, c := range calls {
		notModified, err := g.do(ctx, r, inst, c)
		if err != nil {
			return err // cut: the calls made are in the totals, not in the kind's
		}
		done.calls++
		if notModified {
			done.notModified++
		}
	}
	g.mu.Lock()
	k := g.byKind[kind]
	if k == nil {
		k = &kindCalls{}
		g.byKind[kind] = k
	}
	k.jobs++
	k.calls += done.calls
	k.notModified += done.notModified
	g.mu.Unlock()
	return nil
}

// do makes one call; notModified when it was answered 304.
func (g *simGitHub) do(ctx context.Context, r int, inst int64, c call) (notModified bool, err error) {
	g.mu.Lock()
	u := g.inst[inst]
	if u == nil {
		u = &instUse{}
		g.inst[inst] = u
	}
	u.inFlight++
	g.mu.Unlock()
	t := time.NewTimer(g.perRequest)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		g.mu.Lock()
		u.inFlight--
		g.mu.Unlock()
		return false, ctx.Err()
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() { u.inFlight-- }()
	g.calls++
	if now.Sub(u.minute) >= time.Minute {
		u.minute, u.points, u.writes = now, 0, 0
	}
	if !c.write && g.etags[r][c.resource] == g.version[c.resource]+1 {
		// The ETag still matches: 304, not charged.
		g.notModified++
		return true, nil
	}
	points := 1
	if c.write {
		points = 5
	}
	switch {
	case u.inFlight > secondaryConcurrent || u.points+points > secondaryPointsMinute ||
		(c.creates && (u.writes >= contentPerMinute || u.created >= contentPerHour)):
		g.secondary++
		u.limited++
		return false, nil
	case u.hour >= primaryPerHour:
		g.primary++
		u.limited++
		return false, nil
	}
	u.hour++
	u.points += points
	if c.creates {
		u.writes++
		u.created++
	}
	if c.write {
		g.version[c.resource]++
		return false, nil
	}
	g.etags[r][c.resource] = g.version[c.resource] + 1 // 0 means "no ETag"
	return false, nil
}
