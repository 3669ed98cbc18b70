package forge

import "context"

// sbCheckRun is a check run the bot created.
type sbCheckRun struct {
	id  int64
	out CheckRunOut
}

// CreateCheckRun implements CheckWriter: the run is kept per head commit
// (CreatedCheckRuns) and, as on GitHub, listed by ListChecks after the
// checks the tests set with SetChecks, as made by the sandbox's AppID.
func (s *Sandbox) CreateCheckRun(ctx context.Context, c CheckRunOut) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("POST check-run"); err != nil {
		return 0, err
	}
	if s.created == nil {
		s.created = map[string][]sbCheckRun{}
	}
	c.Actions = append([]CheckRunAction(nil), c.Actions...)
	id := s.id()
	s.created[c.HeadSHA] = append(s.created[c.HeadSHA], sbCheckRun{id: id, out: c})
	return id, nil
}

// CreatedCheckRuns returns the check runs created on sha, oldest first.
func (s *Sandbox) CreatedCheckRuns(sha string) []CheckRunOut {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRunOut
	for _, c := range s.created[sha] {
		out = append(out, c.out)
	}
	return out
}

// createdChecksLocked lists the created check runs on sha as ListChecks
// reports them.
func (s *Sandbox) createdChecksLocked(sha string) []Check {
	var out []Check
	for _, c := range s.created[sha] {
		out = append(out, Check{ID: c.id, Name: c.out.Name, Status: c.out.Status, Conclusion: c.out.Conclusion,
			URL: c.out.DetailsURL, AppID: s.AppID})
	}
	return out
}
