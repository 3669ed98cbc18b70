package deploygate

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// FuzzDecideApprovesOnlyWhatTheRuleAllows varies a state, a config and a
// request and checks the rule's promises: an approval needs a running flow
// at its deploy step whose gates passed on exactly the requested commit,
// and either an "approve" answer for that environment and commit or
// auto_approve; a question comes only with Ask; nothing panics.
func FuzzDecideApprovesOnlyWhatTheRuleAllows(f *testing.F) {
	f.Add("deploy", "in-progress", reviewed, reviewed, "production", "production", "A", false, false, int64(0))
	f.Add("deploy", "stopped", reviewed, reviewed, "production", "production", "A", true, true, int64(5))
	f.Add("deploy", "in-progress", reviewed, later, "Production", "production", "B", true, true, int64(-3))
	f.Add("run-tests", "failed", "", reviewed, "staging", "", "", true, false, int64(2))
	f.Fuzz(func(t *testing.T, slug, run, gateHead, sha, answeredEnv, env, letter string, auto, answerAtEntry bool, skew int64) {
		st := atDeploy()
		st.Slug, st.Run = slug, state.RunStatus(run)
		st.PRChecks[0].GateHead = gateHead
		if answerAtEntry {
			st.Decisions = append(st.Decisions, state.Decision{Gate: "g8-confirm-deploy", Option: "A", At: t0.Add(time.Duration(skew) * time.Second)})
		}
		if letter != "" {
			st.Decisions = append(st.Decisions, state.Decision{Gate: "g9-" + string(Kind(answeredEnv, sha)), Option: letter, By: "maria", At: t0.Add(time.Hour)})
		}
		cfg := gateCfg()
		cfg.AutoApprove = auto
		d := Decide(st, cfg, Request{Environment: env, SHA: sha})
		if (d.Question != nil) != (d.Verdict == Ask) {
			t.Fatalf("question %+v with verdict %s", d.Question, d.Verdict)
		}
		if d.Comment == "" {
			t.Fatal("a decision without a message")
		}
		if d.Verdict != Approve {
			return
		}
		if st.Run == state.RunStopped || st.Run == state.RunFailed || st.Slug != cfg.Step || sha == "" || !strings.EqualFold(gateHead, sha) {
			t.Fatalf("approved %+v for slug %q run %q gate head %q sha %q", d, slug, run, gateHead, sha)
		}
		byAnswer := letter == LetterApprove && strings.EqualFold(answeredEnv, env)
		if !byAnswer && !(auto && answerAtEntry) {
			t.Fatalf("approved %+v without an approve answer for %q (answered %q for %q) or auto_approve", d, env, letter, answeredEnv)
		}
	})
}
