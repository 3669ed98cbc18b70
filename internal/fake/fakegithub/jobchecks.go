package fakegithub

import (
	"encoding/json"
	"fmt"
)

// The check run of a workflow job. When a workflow runs, GitHub gives each
// of its jobs a check run of its own (app GitHub Actions), named after the
// job (its name:, else its id: GITHUB_JOB at run time), on the commit the
// run is for: the pull request's head for pull_request and
// pull_request_review runs, the queue's commit for merge_group. It is in
// progress while the job runs and completes after the job's last step:
// success when the step exited 0, failure otherwise. Completed last, it is
// the newest check run of its name on that commit, the one GitHub shows
// and a required check reads.
//
// A test world opts in with SetWorkflowJob; the harness that runs the
// Action binary calls JobStarted before each run and JobFinished after it.

// WorkflowJob is the job of a workflow that runs autopilot.
type WorkflowJob struct {
	// ID is the job's key under jobs: (GITHUB_JOB).
	ID string
	// Name is the job's name:, "" when it has none.
	Name string
}

// CheckName is the name of the job's check run: its name, else its id.
func (j WorkflowJob) CheckName() string {
	if j.Name != "" {
		return j.Name
	}
	return j.ID
}

// JobRun is one run of the job: its check run (0 when the event's commit
// is not one the fake models).
type JobRun struct {
	Job      WorkflowJob
	CheckRun int64
	HeadSHA  string
}

// SetWorkflowJob makes every Action run in repo a run of job j.
func (s *Server) SetWorkflowJob(repo string, j WorkflowJob) error {
	if j.ID == "" {
		return fmt.Errorf("fakegithub: a workflow job needs an id")
	}
	return s.inRepo(repo, func(rp *repository) error {
		rp.job = &j
		return nil
	})
}

// JobStarted starts a run of repo's workflow job for event with payload:
// the job's check run, in progress, on the commit the run is for (a pull
// request's head, a merge queue's commit). ok is false when repo has no
// job (SetWorkflowJob). Other events run on the default branch's head,
// which the fake does not model, and a payload that is not JSON names no
// commit: they get no check run.
func (s *Server) JobStarted(repo, event string, payload []byte) (run JobRun, ok bool, err error) {
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
	sha := ""
	if json.Unmarshal(payload, &p) != nil {
		event = "" // not an event GitHub would send: no commit
	}
	switch event {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		if p.PullRequest != nil {
			sha = p.PullRequest.Head.SHA
		}
	case "merge_group":
		if p.MergeGroup != nil {
			sha = p.MergeGroup.HeadSHA
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return JobRun{}, false, err
	}
	if rp.job == nil {
		return JobRun{}, false, nil
	}
	run = JobRun{Job: *rp.job, HeadSHA: sha}
	if sha == "" {
		return run, true, nil
	}
	id := s.newID()
	cr := &checkRun{id: id, name: rp.job.CheckName(), status: "in_progress", started: s.now(), appID: ActionsAppID,
		externalID: jobExternalID(id), detailsURL: s.webURL + "/" + rp.fullName() + "/actions/runs/" + itoa(id) + "/job/" + itoa(id)}
	rp.checks[sha] = append(rp.checks[sha], cr)
	run.CheckRun = id
	return run, true, nil
}

// JobFinished completes run's check run after the job's step exited with
// code: success on 0, failure otherwise. The run becomes the newest on its
// commit.
func (s *Server) JobFinished(repo string, run JobRun, code int) error {
	if run.CheckRun == 0 {
		return nil
	}
	return s.inRepo(repo, func(rp *repository) error {
		runs := rp.checks[run.HeadSHA]
		for i, cr := range runs {
			if cr.id != run.CheckRun {
				continue
			}
			cr.status, cr.conclusion, cr.completed = "completed", "success", s.now()
			if code != 0 {
				cr.conclusion = "failure"
			}
			rp.checks[run.HeadSHA] = append(append(runs[:i:i], runs[i+1:]...), cr)
			return nil
		}
		return fmt.Errorf("fakegithub: no job check run %d on %s", run.CheckRun, run.HeadSHA)
	})
}

// jobExternalID is the external_id of a job's check run: an id of GitHub
// Actions' own, shaped like a UUID.
func jobExternalID(id int64) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", id, id)
}
