package forge

import (
	"context"
	"fmt"
	"strings"
)

// GetWorkflowRun implements Deployments.
func (s *Sandbox) GetWorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET run"); err != nil {
		return WorkflowRun{}, err
	}
	for _, r := range s.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return WorkflowRun{}, fmt.Errorf("run %d: %w", id, ErrNotFound)
}

// ReviewDeploymentRule implements Deployments: a second answer for the same
// run and environment is refused as GitHub refuses it (ErrValidation).
func (s *Sandbox) ReviewDeploymentRule(ctx context.Context, run int64, env, answer, comment string) error {
	s.mu.Lock()
	if err := s.call("POST deployment-rule"); err != nil {
		s.mu.Unlock()
		return err
	}
	if answer != "" {
		for _, c := range s.deploys {
			if c.Run == run && strings.EqualFold(c.Environment, env) && c.Answer != "" {
				s.mu.Unlock()
				return fmt.Errorf("deployment protection rule of run %d decided already: %w", run, ErrValidation)
			}
		}
	}
	s.deploys = append(s.deploys, DeployCall{Run: run, Environment: env, Answer: answer, Comment: comment})
	what := "report"
	if answer != "" {
		what = answer
	}
	s.mu.Unlock()
	s.notify(Change{Kind: "deployment-rule", Content: fmt.Sprintf("run %d %s %s: %s", run, env, what, comment), Actor: s.Identity.Login, At: s.now()})
	return nil
}

// DeployCalls returns the protection-rule answers and reports sent so far.
func (s *Sandbox) DeployCalls() []DeployCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DeployCall(nil), s.deploys...)
}

// ListDeploymentApprovals implements Deployments.
func (s *Sandbox) ListDeploymentApprovals(ctx context.Context, run int64) ([]DeploymentApproval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET approvals"); err != nil {
		return nil, err
	}
	return append([]DeploymentApproval(nil), s.approvals[run]...), nil
}

// ReviewDeployment records a reviewer's decision on the environment page
// for run (what ListDeploymentApprovals lists).
func (s *Sandbox) ReviewDeployment(run int64, env, login, state, comment string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.approvals == nil {
		s.approvals = map[int64][]DeploymentApproval{}
	}
	s.approvals[run] = append(s.approvals[run], DeploymentApproval{Environments: []string{env}, State: state, User: login, Comment: comment})
}
