package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/forge"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
)

// The workflow job's own check run. GitHub gives the job that runs
// autopilot a check run of its own, named after the job (its name:, else
// its id, GITHUB_JOB), on the commit of the run: a pull request's head on
// pull_request and pull_request_review runs, the queue's commit on
// merge_group runs. It completes after the bot exits (success on exit 0),
// so it is the newest check of its name there. Named like the PR check it
// would stand in for it: a pass that changes nothing writes no new bot
// check, and the job's green run is what the head shows and a required
// check reads. So on those runs, before anything else, the Action reads
// the configured check name and refuses the run (exit 2, the job's check
// red) when the job's id is that name, or when the commit carries a check
// run of that name the bot did not write (see ours) that may yet pass
// (mayPass).

// gatedEvents are the events whose job check run lands on a commit the PR
// check gates.
var gatedEvents = map[string]bool{
	"pull_request": true, "pull_request_target": true, "pull_request_review": true,
	"pull_request_review_comment": true, "merge_group": true,
}

// actionsAppID is GitHub Actions' App id: GITHUB_TOKEN's check runs, the
// bot's and every workflow job's, carry it.
const actionsAppID = 15368

// JobCheckError is a workflow whose job's own check run could stand in for
// the PR check (a configuration error, exit code 2).
type JobCheckError struct {
	Check string // the configured check name
	Job   string // GITHUB_JOB, when it is the check name
	Run   *forge.Check
	SHA   string
}

func (e *JobCheckError) Error() string {
	fix := fmt.Sprintf("Rename the job (its id under jobs:, and its name: if it has one) so it is not %q, or set check_name in .github/autopilot.yml to a name no workflow job or App uses, and require that name.", e.Check)
	if e.Job != "" {
		return fmt.Sprintf("the workflow job %q has the PR check's name: GitHub completes the job's own check run %q on the PR head after this run, and a green one would stand in for autopilot's check %q whether or not the merge gate passed. %s",
			e.Job, e.Job, e.Check, fix)
	}
	r := e.Run
	who := "a workflow job's own check run or another workflow's"
	if r.AppID != actionsAppID {
		who = fmt.Sprintf("created by App %d, not GitHub Actions", r.AppID)
	}
	state, stays := "it is still "+r.Status+" and completes after this run", ""
	if r.Status == checkview.CheckCompleted {
		state, stays = "it is "+statusOf(r), " The check run already on this commit stays: push a new commit once the name is fixed."
	}
	return fmt.Sprintf("commit %s carries a check run named %q that autopilot did not write (%s: %s, %s), and it can stand in for autopilot's PR check. %s%s",
		short(e.SHA), e.Check, r.URL, who, state, fix, stays)
}

func statusOf(c *forge.Check) string {
	if c.Conclusion != "" {
		return c.Status + "/" + c.Conclusion
	}
	return c.Status
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// ours reports whether c is one of autopilot's check runs in Action mode:
// created through GITHUB_TOKEN (GitHub Actions) with an external_id
// autopilot gives its checks ("autopilot#<issue>" on a PR head,
// "autopilot-queue#<pr>" on a merge queue's commit). A workflow job's own
// check run has an id of GitHub's as its external_id; another App's has
// another app.
func ours(c forge.Check) bool {
	return checkview.OwnExternalID(c.ExternalID) && c.AppID == actionsAppID
}

// mayPass reports whether a check run may yet satisfy a required check:
// still running, or completed with a conclusion GitHub counts as passing.
// A foreign run that failed blocks a merge at worst, as the gate would.
func mayPass(c forge.Check) bool {
	switch {
	case c.Status != checkview.CheckCompleted:
		return true
	case c.Conclusion == checkview.CheckSuccess || c.Conclusion == checkview.CheckNeutral || c.Conclusion == "skipped":
		return true
	}
	return false
}

// gatedCommit is the commit a run of event attaches its job's check run
// to that the PR check also gates ("" for other events).
func gatedCommit(event string, payload []byte) string {
	if !gatedEvents[event] {
		return ""
	}
	var p struct {
		PullRequest *struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		MergeGroup *struct {
			HeadSHA string `json:"head_sha"`
		} `json:"merge_group"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	if p.MergeGroup != nil {
		return p.MergeGroup.HeadSHA
	}
	if p.PullRequest != nil {
		return p.PullRequest.Head.SHA
	}
	return ""
}

// guardJobCheck refuses a run whose workflow job's check run could stand
// in for the PR check on sha (JobCheckError); the configuration it reads
// may be broken (repofiles.ConfigError).
func guardJobCheck(ctx context.Context, c *gh.Client, configPath, job, sha string) error {
	cfg, err := repofiles.ReadConfig(ctx, c, configPath)
	if err != nil {
		return err
	}
	name := checkview.CheckName(cfg.Config)
	if job != "" && strings.EqualFold(job, name) {
		return &JobCheckError{Check: name, Job: job, SHA: sha}
	}
	runs, err := c.CheckRunsNamed(ctx, sha, name)
	if err != nil {
		return fmt.Errorf("check runs named %q on %s: %w", name, short(sha), err)
	}
	for i := range runs {
		if !ours(runs[i]) && mayPass(runs[i]) {
			return &JobCheckError{Check: name, Run: &runs[i], SHA: sha}
		}
	}
	return nil
}
