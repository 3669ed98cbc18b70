package forge

import "context"

// CreateCheckRun implements CheckWriter: the run is kept per head commit
// (CreatedCheckRuns) and not listed by ListChecks, whose checks the tests
// set with SetChecks.
func (s *Sandbox) CreateCheckRun(ctx context.Context, c CheckRunOut) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("POST check-run"); err != nil {
		return 0, err
	}
	if s.created == nil {
		s.created = map[string][]CheckRunOut{}
	}
	c.Actions = append([]CheckRunAction(nil), c.Actions...)
	s.created[c.HeadSHA] = append(s.created[c.HeadSHA], c)
	return s.id(), nil
}

// CreatedCheckRuns returns the check runs created on sha, oldest first.
func (s *Sandbox) CreatedCheckRuns(sha string) []CheckRunOut {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CheckRunOut(nil), s.created[sha]...)
}
