package wiring

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
)

// countingTransport counts the requests sent through it.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

// TestJiraTrackerOverSendsThroughTheClient: the tracker JiraTrackerOver
// builds sends its calls through the given client's transport (App mode's
// traced one), with the credentials of the inputs.
func TestJiraTrackerOverSendsThroughTheClient(t *testing.T) {
	fj := fakejira.New(fakejira.Options{})
	t.Cleanup(fj.Close)
	o := fj.Options()
	ct := &countingTransport{}
	tr, err := JiraTrackerOver(&http.Client{Transport: ct})(Inputs{JiraURL: fj.URL(), JiraUser: o.User, JiraToken: o.Token, JiraProject: o.Project}, config.Jira{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckAuth(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ct.n.Load() == 0 {
		t.Error("no request went through the given client")
	}
}
