package codec

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// hostile fragments for generated text: marker breakouts, fences, mentions,
// references, HTML, table pipes, non-ASCII.
var hostile = []string{
	"--> <!-- autopilot:state {\"x\":1} -->", "<!-- autopilot:data AAAA -->", "```", "~~~",
	"```\n", "@team", "@org/team", "#12", "GH-3", "<img src=x>", "&amp;", "|", "\\", "[a](b)",
	"\n", "\r\n", "\t", "\u2028", "é", "e\u0301", "日本語", "👍🏽", "\u200b", "\u202e", "\x00",
	"https://evil.example", "**bold**", "- [ ] fake task", "### Tasks", "\"quote\"", "'",
}

// gen builds random valid states from a seeded source.
type gen struct{ r *rand.Rand }

func (g gen) n(max int) int { return g.r.Intn(max + 1) }

func (g gen) pick(vs ...string) string { return vs[g.r.Intn(len(vs))] }

// pickOf is pick for a named kind (state.RunStatus, state.Tracker, ...).
func pickOf[T any](g gen, vs ...T) T { return vs[g.r.Intn(len(vs))] }

// text returns a random string of words, hostile fragments and random
// runes; oneLine strips line breaks (for Choose block texts).
func (g gen) text(oneLine bool) string {
	var b strings.Builder
	for i := g.n(8); i > 0; i-- {
		switch g.n(3) {
		case 0:
			b.WriteString(hostile[g.r.Intn(len(hostile))])
		case 1:
			b.WriteRune(rune(0x20 + g.r.Intn(0x2fff)))
		default:
			b.WriteString(g.pick("plan ", "task ", "Implement ", "retry ", "ok "))
		}
	}
	s := strings.ToValidUTF8(b.String(), "?")
	if oneLine {
		s = strings.NewReplacer("\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ").Replace(s)
		if r := []rune(s); len(r) > 150 {
			s = string(r[:150])
		}
	}
	return s
}

func (g gen) time() time.Time {
	switch g.n(4) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(g.r.Int63n(4e9), 0).In(time.FixedZone("X", 3600*(g.n(10)-5)))
	}
	return time.Unix(g.r.Int63n(4e9), g.r.Int63n(1e9)).UTC()
}

func (g gen) link() string {
	if g.n(3) == 0 {
		return ""
	}
	return fmt.Sprintf("https://github.com/octo-org/hello-world/issues/%d#issuecomment-%d", 1+g.n(99), 1+g.n(1e6))
}

func (g gen) verdict() *state.Verdict {
	return &state.Verdict{Clean: g.n(1) == 0, Skipped: g.n(1) == 0, Reason: g.text(false), Evidence: g.link()}
}

func (g gen) kebab() string {
	return g.pick("architecture-review", "batch-loop", "test-case-generation", "a", "x-1-y")
}

var slugs = []string{"problem", "research", "plan", "decompose", "implement", "run-tests", "security-audit", "deploy"}

func (g gen) slug() string { return slugs[g.r.Intn(len(slugs))] }

func (g gen) stepStatus() state.StepStatus {
	return pickOf(g, state.NotStarted, state.InProgress, state.Completed, state.Skipped, state.Failed)
}

// state returns a random valid state; tasks is the number of tasks.
func (g gen) state(tasks int) *state.State {
	s := &state.State{
		Schema:     state.SchemaVersion,
		Version:    int64(g.n(1000)),
		Repo:       g.pick("octo-org/hello-world", "a/b", "Octo-Org/Hello.World_2"),
		Issue:      1 + g.n(99999),
		Title:      g.text(false),
		Flow:       g.pick("greenfield", "existing-code", "meta-repo", "review-loop"),
		Step:       g.n(12),
		Slug:       g.pick(append(slugs, "done")...),
		Name:       g.text(false),
		Status:     g.stepStatus(),
		Run:        pickOf(g, state.RunInProgress, state.RunAwaitingDecision, state.RunFailed, state.RunDone, state.RunStopped),
		RetryCount: g.n(3),
		Cycle:      1 + g.n(4),
		Limits: state.Limits{Sessions: g.n(5), Iterations: g.n(9), RunStartedAt: g.time(),
			LastConfidence: float64(g.n(100)) / 100, HasConfidence: g.n(1) == 1, FailedWaves: g.n(2), Deferred: g.text(false)},
		StartedAt: g.time(),
		UpdatedAt: g.time(),
	}
	switch g.n(2) {
	case 0:
	case 1:
		s.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
	default:
		s.SubStep = state.SubStep{Phase: g.n(9), Name: g.kebab(), Detail: g.text(false)}
	}
	for i := g.n(10); i > 0; i-- {
		s.Steps = append(s.Steps, state.StepProgress{Slug: g.slug(), Status: g.stepStatus(), Retries: g.n(3), Note: g.text(false), Declared: g.n(1) == 0})
	}
	for i := g.n(6); i > 0; i-- {
		s.Completed = append(s.Completed, state.CompletedStep{Step: g.n(12), Slug: g.slug(), Name: g.text(false),
			At: g.time(), Outcome: g.text(false), Cycle: g.n(3)})
	}
	for i := g.n(5); i > 0; i-- {
		s.Decisions = append(s.Decisions, state.Decision{Gate: fmt.Sprintf("gate-%d", g.n(50)), Question: g.text(false),
			Option: g.pick("A", "B", "C", "D"), OptionText: g.text(false), By: g.pick("octocat", "dependabot[bot]", "a-b"),
			At: g.time(), Link: g.link(), CommentID: int64(g.n(1e6)), Reason: g.text(false), GateOpenedAt: g.time()})
	}
	if g.n(2) > 0 {
		s.LastSession = state.Session{Date: g.time(), EndedAt: g.text(false), Reason: g.text(false), Notes: g.text(false)}
	}
	for i := g.n(4); i > 0; i-- {
		s.RetryLog = append(s.RetryLog, state.RetryEntry{Attempt: 1 + g.n(2), Step: g.n(9), Name: g.text(false),
			SubStep: g.text(false), Reason: g.text(false), At: g.time()})
	}
	for i := g.n(3); i > 0; i-- {
		s.Blockers = append(s.Blockers, g.text(false))
	}
	g.tasks(s, tasks)
	g.rest(s)
	return s
}

func (g gen) tasks(s *state.State, n int) {
	for i := 0; i < n; i++ {
		t := state.Task{ID: fmt.Sprintf("%02d", i+1), Kind: pickOf(g, state.KindEpic, state.KindTask, state.KindTask), Title: g.text(false),
			Description: g.text(false), IdemKey: fmt.Sprintf("ap-%d-%d", s.Issue, i), Sync: pickOf(g, state.SyncPending, state.SyncSending, state.SyncCreated, state.SyncFailed, state.SyncLocal),
			SentAt: g.time(), Done: g.n(1) == 1, Error: g.text(false), Carryover: g.n(4) == 0, Step: g.slug(),
			Points: float64(g.n(16)) / 2}
		if t.Sync == state.SyncCreated && g.n(3) == 0 {
			t.Gone, t.Remark = g.pick(state.IssueDeleted, state.IssueNotFound, state.IssueTransferred), g.text(false)
		}
		if i > 0 && g.n(1) == 0 {
			t.Epic = fmt.Sprintf("%02d", 1+g.n(i-1))
		}
		if g.n(2) == 0 {
			t.DependsOn = []string{fmt.Sprintf("%02d", 1+g.n(i))}
			if g.n(1) == 0 {
				t.DepsLinked = t.DependsOn
			}
		}
		if t.Sync == state.SyncCreated {
			t.Key = fmt.Sprintf("PROJ-%d", 1+g.n(999))
			if g.n(1) == 0 {
				t.URL = "https://example.atlassian.net/browse/" + t.Key
			}
		}
		s.Tasks = append(s.Tasks, t)
	}
}

func (g gen) rest(s *state.State) {
	if g.n(2) > 0 {
		v := g.n(1) == 1
		s.TrackerEnabled = &v
		s.TrackerNote = g.text(false)
		s.TrackerOff = g.pick("", state.TrackerNotConfigured)
		s.TrackerRetryAt = g.time()
		s.Tracker = pickOf[state.Tracker](g, "", "github")
		s.TrackerInUse = pickOf(g, "", state.TrackerJira, state.TrackerGitHub, state.TrackerLocal)
	}
	if g.n(2) == 0 {
		s.BackgroundHeld = &state.BackgroundHold{Until: g.time().Add(time.Hour), Reason: pickOf(g, state.HeldAtReserve, state.HeldSpent, state.HeldRetryAfter)}
	}
	if g.n(1) == 0 {
		s.Since = g.time()
		s.LedgerFloor = int64(g.n(1000))
		s.CompletedFolded = g.n(100)
		from := g.n(40) + 1
		for i := g.n(3); i >= 0; i-- {
			to := from + g.n(30)
			s.Archives = append(s.Archives, state.DecisionArchive{From: from, To: to, URL: g.link(), Opened: g.time()})
			from = to + 1
		}
		s.DecisionsArchived = from - 1
	}
	if g.n(1) == 0 {
		gt := &state.Gate{ID: fmt.Sprintf("gate-%d", g.n(50)), Kind: "boundary", Title: "DECISION REQUIRED: " + g.text(true),
			Recommend: "A", Reason: "because " + g.text(false), OpenedAt: g.time(), CommentID: int64(g.n(1e6))}
		for i := 0; i < 2+g.n(2); i++ {
			gt.Options = append(gt.Options, state.Option{Letter: string(rune('A' + i)), Text: "opt " + g.text(true), Action: state.Action(g.pick("confirm", "retry-fresh", "back:plan"))})
		}
		if g.n(1) == 0 {
			gt.Details = []string{"Step: 5 — " + g.text(true)}
		}
		if g.n(1) == 0 {
			gt.Next = g.slug()
		}
		if g.n(1) == 0 {
			b := &state.Ballot{Reminded: g.time(), Escalated: g.time(), Expired: g.time(), Since: g.time(), Status: g.text(true)}
			for i := g.n(2); i >= 0; i-- {
				b.Votes = append(b.Votes, state.Vote{By: g.pick("ada", "bob", "grace"), Option: "A", Where: pickOf(g, state.VoteComment, state.VoteCheck),
					At: g.time(), CommentID: int64(1 + g.n(1e6)), Link: g.link(), Evidence: "member of @acme/sre"})
			}
			gt.Ballot = b
		}
		s.Gate = gt
	}
	for i := g.n(5); i > 0; i-- {
		s.Ledger = append(s.Ledger, state.LedgerEntry{CommentID: int64(1 + g.n(1e6)), Outcome: pickOf(g, state.LedgerApplied, state.RejectedUnauthorized, state.LedgerNotCommand)})
	}
	for i := g.n(2); i > 0; i-- {
		s.Replies = append(s.Replies, g.text(false))
	}
	for i := g.n(2); i > 0; i-- {
		e := state.Effect{Kind: state.EffectKind(g.pick("comment", "reply", "react", "dispatch", "jira-sync")), Marker: g.text(false), Body: g.text(false),
			Target: int64(g.n(1000)), Reaction: g.pick("+1", "confused", "")}
		if g.n(1) == 0 {
			e.Workflow, e.Ref = "autopilot.yml", "main"
			e.Inputs = map[string]string{"issue": "12", "step": g.text(false)}
		}
		if g.n(1) == 0 {
			e.RunID, e.Environment, e.Answer = int64(1+g.n(1e9)), g.pick("production", "Staging"), pickOf(g, state.DeployApproved, state.DeployRejected)
		}
		s.Outbox = append(s.Outbox, e)
	}
	if g.n(3) == 0 {
		s.Stop = &state.Stop{Reason: "max-sessions-reached", Hint: g.text(false), At: g.time(), Resume: pickOf(g, "", state.RunInProgress)}
	}
	if g.n(2) == 0 {
		s.Review = &state.ReviewLoop{Slug: "fix-login", Snapshot: g.text(false), Iteration: g.n(10), ReviewCycle: g.n(3), MaxIterations: 10,
			Architect: &state.Approval{By: "octocat", At: g.time(), Link: g.link(), Note: g.text(false)},
			Handoffs: map[string]state.Handoff{"plan": {Summary: g.text(false), Links: []string{g.link()}, At: g.time()},
				"qa": {Summary: g.text(false), Links: []string{g.link()}, At: g.time(), PR: g.n(500) + 1, HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
					Review: int64(g.n(1e9)) + 1, Checks: []int64{int64(g.n(1e9)) + 1}}},
			FailureHistory: []string{g.text(false)}}
	}
	if g.n(1) == 0 {
		s.Exec = &state.Execution{Executor: "dispatch", Session: "ap-12-3", Attempt: g.n(3), RunID: int64(g.n(1e9)), DispatchedAt: g.time(), StartedAt: g.time(), Announced: true}
	}
	for i := g.n(2); i > 0; i-- {
		s.LinkedPRs = append(s.LinkedPRs, 1+g.n(500))
		s.PRChecks = append(s.PRChecks, state.PRCheck{PR: 1 + g.n(500), Head: fmt.Sprintf("%040x", g.n(1e9)), Trusted: g.n(1) == 0, Shown: fmt.Sprintf("%016x", g.n(1e9)), GateHead: g.pick("", fmt.Sprintf("%040x", g.n(1e9))), Pending: g.n(1) == 0})
	}
	for i := g.n(2); i > 0; i-- {
		s.Deploys = append(s.Deploys, state.DeployRequest{RunID: int64(1 + g.n(1e9)), Environment: g.pick("production", "Staging"),
			SHA: fmt.Sprintf("%040x", g.n(1e9)), Gate: state.GateKind(g.pick("", "deploy-1111111111111-0123abcd")),
			Answer: pickOf(g, "", state.DeployApproved, state.DeployRejected), Comment: g.text(false), Sent: g.n(1) == 0, At: g.time(), Reviewed: g.n(3)})
	}
	for i := g.n(2); i > 0; i-- {
		s.LinkVouches = append(s.LinkVouches, state.LinkVouch{PR: 1 + g.n(500), By: g.pick("octocat", "a-b"), Body: fmt.Sprintf("%016x", g.n(1e9))})
	}
	s.Seq = int64(g.n(40))
	if g.n(1) == 0 {
		s.ConfigRead, s.ConfigYAML = true, "default_flow: greenfield\n# "+g.text(false)
	}
	s.PendingAuthCheck = g.n(1) == 0
	if g.n(1) == 0 {
		s.WriteID = fmt.Sprintf("%016x", g.n(1e9))
	}
	for i := g.n(2); i > 0; i-- {
		s.Refused = append(s.Refused, "comment <!-- autopilot:reply "+fmt.Sprint(g.n(1e6))+" --> "+fmt.Sprint(g.n(1e9)))
	}
	if g.n(2) == 0 {
		s.FailedSessions = map[string]int{g.slug(): g.n(3)}
	}
	if s.Review != nil {
		s.Review.Critic = &state.Approval{By: "hubot", At: g.time(), Link: g.link(), Note: g.text(false)}
		s.Review.ReviewVerdict = g.verdict()
		s.Review.QAVerdict = g.verdict()
		s.Review.InterviewRationale, s.Review.InterviewSkipped = g.text(false), g.text(false)
		s.Review.ReturnToPlanReason = g.text(false)
	}
}

var timeT = reflect.TypeOf(time.Time{})

// utc converts every time in v (a pointer) to UTC, in place, so states can
// be compared with reflect.DeepEqual after a JSON round trip.
func utc(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			utc(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			utc(v.Index(i))
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(iter.Value().Type()).Elem()
			e.Set(iter.Value())
			utc(e)
			v.SetMapIndex(iter.Key(), e)
		}
	case reflect.Struct:
		if v.Type() == timeT {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			utc(v.Field(i))
		}
	}
}

// leafPaths lists the JSON paths of every leaf field of t ("tasks[].title").
func leafPaths(t reflect.Type, path string, out map[string]bool) {
	switch t.Kind() {
	case reflect.Pointer:
		leafPaths(t.Elem(), path, out)
	case reflect.Slice, reflect.Map:
		leafPaths(t.Elem(), path+"[]", out)
	case reflect.Struct:
		if t == timeT {
			out[path] = true
			return
		}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "-" {
				continue // never stored (Effect.Retry, Effect.Owed)
			}
			if path != "" {
				name = path + "." + name
			}
			leafPaths(t.Field(i).Type, name, out)
		}
	default:
		out[path] = true
	}
}

// setPaths records the paths of leaves that hold a non-zero value in v.
func setPaths(v reflect.Value, path string, out map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setPaths(v.Elem(), path, out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			setPaths(v.Index(i), path+"[]", out)
		}
	case reflect.Map:
		for iter := v.MapRange(); iter.Next(); {
			setPaths(iter.Value(), path+"[]", out)
		}
	case reflect.Struct:
		if v.Type() == timeT {
			if !v.Interface().(time.Time).IsZero() {
				out[path] = true
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if path != "" {
				name = path + "." + name
			}
			setPaths(v.Field(i), name, out)
		}
	default:
		if !v.IsZero() {
			out[path] = true
		}
	}
}

// TestGeneratorCoversEveryField keeps the round-trip property honest: when
// a field is added to State, the generator must learn to fill it.
func TestGeneratorCoversEveryField(t *testing.T) {
	all, set := map[string]bool{}, map[string]bool{}
	leafPaths(reflect.TypeOf(state.State{}), "", all)
	g := gen{rand.New(rand.NewSource(9))}
	for i := 0; i < 300; i++ {
		s := g.state(g.n(6))
		s.Sig = strings.Repeat("a", 64) // set by Render, never by the generator
		setPaths(reflect.ValueOf(s), "", set)
	}
	for p := range all {
		if !set[p] {
			t.Errorf("the random state generator never sets %s", p)
		}
	}
}
