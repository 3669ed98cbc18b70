package state

import (
	"fmt"
	"strings"
)

// Action is what choosing a gate option does, as the state stores it: a
// kind, and for the kinds that take one an argument after a colon
// ("back:plan"). The kinds and their arguments are the actions table below;
// Valid refuses any other action, and the engine has one handler per kind.
type Action string

// The gate action kinds.
const (
	ActFlow            Action = "flow"             // flow:<name>: start the chosen flow
	ActFreshSession    Action = "fresh-session"    // enter the step with a new executor session
	ActContinueSession Action = "continue-session" // enter the step in the current session
	ActJiraRetry       Action = "jira-retry"       // check the Jira credentials again
	ActJiraOff         Action = "jira-off"         // go on without Jira
	ActTrackerGitHub   Action = "tracker-github"   // keep the tasks as GitHub sub-issues
	ActRetryFresh      Action = "retry-fresh"      // retry a failed step in a new session
	ActSkip            Action = "skip"             // skip a failed step
	ActSkipReason      Action = "skip-reason"      // skip-reason[:<login>]: confirm the skip <login> asked for
	ActAbort           Action = "abort"            // stop the run
	ActConfirm         Action = "confirm"          // start a step that asks first
	ActExecute         Action = "execute"          // keep the step (skip declined)
	ActStay            Action = "stay"             // keep the step (rollback declined)
	ActBack            Action = "back"             // back:<step>: re-run an earlier step
	ActApprove         Action = "approve"          // approve a step's output
	ActChanges         Action = "changes"          // ask the executor to revise
	ActNextCycle       Action = "next-cycle"       // start the next loop cycle
	ActFinish          Action = "finish"           // finish the run at the loop's end
	ActLowConfContinue Action = "low-confidence-continue"
	ActLowConfStop     Action = "low-confidence-stop"
	ActDeployApprove   Action = "deploy-approve" // answer a deploy request: approved
	ActDeployReject    Action = "deploy-reject"  // answer a deploy request: rejected
)

// argRule says what may follow an action kind's colon.
type argRule int

const (
	argNone     argRule = iota // nothing: "abort"
	argSlug                    // a step slug or flow name: "back:plan"
	argOptLogin                // nothing, or a GitHub login: "skip-reason:octocat"
)

// actions is the table of gate action kinds and their arguments.
var actions = map[Action]argRule{
	ActFlow: argSlug, ActFreshSession: argNone, ActContinueSession: argNone,
	ActJiraRetry: argNone, ActJiraOff: argNone, ActTrackerGitHub: argNone,
	ActRetryFresh: argNone, ActSkip: argNone, ActSkipReason: argOptLogin,
	ActAbort: argNone, ActConfirm: argNone, ActExecute: argNone, ActStay: argNone,
	ActBack: argSlug, ActApprove: argNone, ActChanges: argNone,
	ActNextCycle: argNone, ActFinish: argNone,
	ActLowConfContinue: argNone, ActLowConfStop: argNone,
	ActDeployApprove: argNone, ActDeployReject: argNone,
}

// ActionKinds lists every gate action kind (for the engine's table test).
func ActionKinds() []Action {
	out := make([]Action, 0, len(actions))
	for k := range actions {
		out = append(out, k)
	}
	return out
}

// With returns the kind with its argument: ActBack.With("plan") is
// "back:plan".
func (a Action) With(arg string) Action { return a + ":" + Action(arg) }

// Split returns the action's kind and argument.
func (a Action) Split() (kind Action, arg string) {
	k, arg, _ := strings.Cut(string(a), ":")
	return Action(k), arg
}

// Check reports whether a is a known kind with an argument it takes.
func (a Action) Check() error {
	kind, arg := a.Split()
	rule, known := actions[kind]
	_, hasArg := strings.CutPrefix(string(a), string(kind)+":")
	switch {
	case !known:
		return fmt.Errorf("%q is not a gate action", string(a))
	case rule == argNone && hasArg:
		return fmt.Errorf("%q: %s takes no argument", string(a), kind)
	case rule == argSlug && !slugRE.MatchString(arg):
		return fmt.Errorf("%q: %s needs a step or flow slug", string(a), kind)
	case rule == argOptLogin && hasArg && !loginRE.MatchString(arg):
		return fmt.Errorf("%q: %s takes a GitHub login", string(a), kind)
	}
	return nil
}
