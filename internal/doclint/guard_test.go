package doclint

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// guardOf returns the job-level if: of the first workflow snippet of doc
// that has one.
func guardOf(t *testing.T, doc string) string {
	t.Helper()
	for _, s := range Extract(doc, []byte(readRepo(t, doc))) {
		var job map[string]any
		if yaml.Unmarshal([]byte(s.Text), &job) == nil {
			if g, ok := job["if"].(string); ok {
				return g
			}
		}
	}
	t.Fatalf("%s has no snippet with an if:", doc)
	return ""
}

// TestCostsGuardLetsThroughWhatAutopilotActsOn evaluates the if: guard of
// docs/costs.md on the events of the documented workflow: it must let
// through every event the router (internal/reconcile/route) acts on, and
// skip those it drops without an API call.
func TestCostsGuardLetsThroughWhatAutopilotActsOn(t *testing.T) {
	guard := guardOf(t, "docs/costs.md")
	managed := []any{map[string]any{"name": "bug"}, map[string]any{"name": "autopilot"}}
	plain := []any{map[string]any{"name": "bug"}, map[string]any{"name": "autopilot/flow:greenfield"}}
	linked, unlinked := "Adds export.\n\nFixes #12", "Adds export."
	cases := []struct {
		name, event string
		payload     map[string]any
		run         bool
	}{
		// route.issues: the trigger label itself, and closing or reopening a managed issue.
		{"label autopilot added", "issues", map[string]any{"action": "labeled", "label": map[string]any{"name": "autopilot"}, "issue": map[string]any{"labels": managed}}, true},
		{"label autopilot removed", "issues", map[string]any{"action": "unlabeled", "label": map[string]any{"name": "autopilot"}, "issue": map[string]any{"labels": plain}}, true},
		{"other label on a managed issue", "issues", map[string]any{"action": "labeled", "label": map[string]any{"name": "bug"}, "issue": map[string]any{"labels": managed}}, false},
		{"flow label added first", "issues", map[string]any{"action": "labeled", "label": map[string]any{"name": "autopilot/flow:greenfield"}, "issue": map[string]any{"labels": plain}}, false},
		{"managed issue closed", "issues", map[string]any{"action": "closed", "issue": map[string]any{"labels": managed}}, true},
		{"managed issue reopened", "issues", map[string]any{"action": "reopened", "issue": map[string]any{"labels": managed}}, true},
		{"unmanaged issue closed", "issues", map[string]any{"action": "closed", "issue": map[string]any{"labels": plain}}, false},
		// route.issueComment: managed issues, /autopilot anywhere (unmanaged reply), PRs that link.
		{"answer on a managed issue", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "B"}, "issue": map[string]any{"labels": managed, "body": "x"}}, true},
		{"state comment edited", "issue_comment", map[string]any{"action": "edited", "comment": map[string]any{"body": "<!-- autopilot:state -->"}, "issue": map[string]any{"labels": managed}}, true},
		{"command on an unmanaged issue", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "/autopilot status"}, "issue": map[string]any{"labels": plain}}, true},
		{"command in capitals", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "Please: /AUTOPILOT help"}, "issue": map[string]any{"labels": plain}}, true},
		{"chatter on an unmanaged issue", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "+1"}, "issue": map[string]any{"labels": plain}}, false},
		{"answer on a linked PR", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "A"}, "issue": map[string]any{"labels": []any{}, "body": linked, "pull_request": map[string]any{"url": "u"}}}, true},
		{"comment on a PR that links nothing", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "A"}, "issue": map[string]any{"labels": []any{}, "body": unlinked, "pull_request": map[string]any{"url": "u"}}}, false},
		{"comment on a PR without a description", "issue_comment", map[string]any{"action": "created", "comment": map[string]any{"body": "A"}, "issue": map[string]any{"labels": []any{}, "body": nil, "pull_request": map[string]any{"url": "u"}}}, false},
		// route.pullRequest / pullReview: a PR whose description links; closed never.
		{"linked PR opened", "pull_request", map[string]any{"action": "opened", "pull_request": map[string]any{"body": linked}}, true},
		{"linked PR pushed", "pull_request", map[string]any{"action": "synchronize", "pull_request": map[string]any{"body": linked}}, true},
		{"linked PR closed", "pull_request", map[string]any{"action": "closed", "pull_request": map[string]any{"body": linked}}, false},
		{"unlinked PR opened", "pull_request", map[string]any{"action": "opened", "pull_request": map[string]any{"body": unlinked}}, false},
		{"review of a linked PR", "pull_request_review", map[string]any{"action": "submitted", "pull_request": map[string]any{"body": linked}}, true},
		{"review of an unlinked PR", "pull_request_review", map[string]any{"action": "submitted", "pull_request": map[string]any{"body": unlinked}}, false},
		// Always: dispatched runs, merge queues, sweeps.
		{"workflow run", "workflow_run", map[string]any{"action": "completed"}, true},
		{"merge queue", "merge_group", map[string]any{"action": "checks_requested"}, true},
		{"sweep", "schedule", map[string]any{}, true},
		{"sweep by hand", "workflow_dispatch", map[string]any{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := map[string]any{"github": map[string]any{"event_name": c.event, "event": c.payload, "repository": "acme/widgets"}}
			got, err := evalExpr(guard, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if truthy(got) != c.run {
				t.Errorf("guard on %s %v = %v, want %v", c.event, c.payload, truthy(got), c.run)
			}
		})
	}
}

// TestForksGuardSkipsOnlyForkRuns: the if: of docs/forks.md skips the
// pull_request and pull_request_review runs of a fork's PR and nothing else.
func TestForksGuardSkipsOnlyForkRuns(t *testing.T) {
	guard := guardOf(t, "docs/forks.md")
	pr := func(repo string) map[string]any {
		return map[string]any{"pull_request": map[string]any{"head": map[string]any{"repo": map[string]any{"full_name": repo}}}}
	}
	cases := []struct {
		event   string
		payload map[string]any
		run     bool
	}{
		{"pull_request", pr("acme/widgets"), true},
		{"pull_request", pr("stranger/widgets"), false},
		{"pull_request_review", pr("stranger/widgets"), false},
		{"issue_comment", map[string]any{"issue": map[string]any{"pull_request": map[string]any{}}}, true},
		{"schedule", map[string]any{}, true},
	}
	for _, c := range cases {
		ctx := map[string]any{"github": map[string]any{"event_name": c.event, "event": c.payload, "repository": "acme/widgets"}}
		got, err := evalExpr(guard, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if truthy(got) != c.run {
			t.Errorf("fork guard on %s %v = %v, want %v", c.event, c.payload, truthy(got), c.run)
		}
	}
}

// evalExpr evaluates the part of GitHub's expression language the guards
// use: || && ! == != ( ), 'strings', null, property paths with .* filters,
// and contains(). Comparisons of strings ignore case, as GitHub's do.
func evalExpr(src string, ctx map[string]any) (any, error) {
	p := &exprParser{toks: tokenize(src), ctx: ctx}
	v, err := p.or()
	if err == nil && p.i < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	return v, err
}

type exprParser struct {
	toks []string
	i    int
	ctx  map[string]any
}

func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case strings.HasPrefix(s[i:], "||"), strings.HasPrefix(s[i:], "&&"), strings.HasPrefix(s[i:], "=="), strings.HasPrefix(s[i:], "!="):
			toks = append(toks, s[i:i+2])
			i += 2
		case strings.ContainsRune("()!,", rune(c)):
			toks = append(toks, string(c))
			i++
		case c == '\'':
			j := i + 1
			for j < len(s) && s[j] != '\'' {
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		default:
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || strings.ContainsRune("._-*", rune(s[j]))) {
				j++
			}
			if j == i {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *exprParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.peek() == "||" {
		p.i++
		var r any
		if r, err = p.and(); !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) and() (any, error) {
	v, err := p.unary()
	for err == nil && p.peek() == "&&" {
		p.i++
		var r any
		if r, err = p.unary(); truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) unary() (any, error) {
	if p.peek() == "!" {
		p.i++
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.cmp()
}

func (p *exprParser) cmp() (any, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	if op := p.peek(); op == "==" || op == "!=" {
		p.i++
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		eq := strings.EqualFold(str(l), str(r)) && (l == nil) == (r == nil)
		return eq == (op == "=="), nil
	}
	return l, nil
}

func (p *exprParser) primary() (any, error) {
	tok := p.peek()
	p.i++
	switch {
	case tok == "(":
		v, err := p.or()
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.i++
		return v, err
	case strings.HasPrefix(tok, "'"):
		return strings.Trim(tok, "'"), nil
	case tok == "null":
		return nil, nil
	case tok == "contains":
		if p.peek() != "(" {
			return nil, fmt.Errorf("contains without (")
		}
		p.i++
		hay, err := p.or()
		if err != nil || p.peek() != "," {
			return nil, fmt.Errorf("contains: %v", err)
		}
		p.i++
		needle, err := p.or()
		if err != nil || p.peek() != ")" {
			return nil, fmt.Errorf("contains: %v", err)
		}
		p.i++
		if list, ok := hay.([]any); ok {
			for _, v := range list {
				if strings.EqualFold(str(v), str(needle)) {
					return true, nil
				}
			}
			return false, nil
		}
		return strings.Contains(strings.ToLower(str(hay)), strings.ToLower(str(needle))), nil
	case tok == "" || strings.ContainsAny(tok[:1], "|&=!),"):
		return nil, fmt.Errorf("unexpected %q", tok)
	}
	var v any = p.ctx
	for _, part := range strings.Split(tok, ".") {
		v = property(v, part)
	}
	return v, nil
}

// property reads one path segment; "*" maps the rest over a list.
func property(v any, name string) any {
	switch x := v.(type) {
	case map[string]any:
		if name == "*" {
			return nil
		}
		return x[name]
	case []any:
		if name == "*" {
			return x
		}
		out := []any{}
		for _, e := range x {
			out = append(out, property(e, name))
		}
		return out
	}
	return nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// truthy is GitHub's: null, false, "" and 0 are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	}
	return true
}
