package appmode

import "github.com/autopilot-dev/autopilot/internal/tracker"

// SubIssueTracker passes the wrapped client's sub-issue API through, so
// tracker: github works in App mode (nil when the client has none).
func (v *view) SubIssueTracker() tracker.SubIssueAPI {
	if f, ok := v.Forge.(tracker.SubIssueForge); ok {
		return f.SubIssueTracker()
	}
	return nil
}
