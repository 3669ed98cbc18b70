package tasks

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// knownFields are the fields of one declared item, in documentation order.
var knownFields = []string{"title", "description", "epic", "depends_on", "points"}

// ParseComment reads every ```autopilot-epics and ```autopilot-tasks block
// of a comment body, in order, and returns their items as pending tasks
// numbered from opts.Start. A comment without blocks yields no tasks and no
// error. Other fenced blocks, and text quoted with ">", are ignored.
//
// Each block holds a YAML list of items (see docs/jira.md):
//
//	```autopilot-tasks
//	- title: Login form            # required, one line, ≤ 255 characters
//	  description: |               # optional plain text
//	    Email + password, rate limited.
//	  epic: Authentication         # tasks only: epic title, local id or Jira key
//	  depends_on: ["01", Sign-up]  # optional: titles or local ids
//	  points: 3                    # optional number
//	```
func ParseComment(body string, opts Options) ([]state.Task, error) {
	blocks, err := findBlocks(body)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var drafts []draft
	for _, b := range blocks {
		seen[b.info]++
		where := b.info
		if seen[b.info] > 1 {
			where = fmt.Sprintf("%s (block %d)", b.info, seen[b.info])
		}
		ds, err := parseBlock(b, where)
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, ds...)
		if len(drafts) > MaxItems {
			break // finish reports it
		}
	}
	return finish(drafts, opts)
}

func parseBlock(b block, where string) ([]draft, error) {
	kind := state.KindTask
	if b.info == EpicsBlock {
		kind = state.KindEpic
	}
	dec := yaml.NewDecoder(strings.NewReader(b.body))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty block declares nothing
		}
		return nil, yamlError(where, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{Where: where, Line: extra.Line, Msg: "want one YAML list per block (found a second document)"}
	}
	if err := noAliases(&doc, where); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, &Error{Where: where, Line: root.Line, Msg: `want a YAML list of items ("- title: ...")`}
	}
	out := make([]draft, 0, len(root.Content))
	for i, item := range root.Content {
		if i >= MaxItems {
			return nil, &Error{Where: where, Line: item.Line, Msg: fmt.Sprintf("more than %d items", MaxItems)}
		}
		if item.Kind != yaml.MappingNode {
			return nil, &Error{Where: where, Line: item.Line, Msg: fmt.Sprintf("item %d: want a mapping with at least a title", i+1)}
		}
		t, err := parseItem(item, kind, where)
		if err != nil {
			return nil, err
		}
		out = append(out, draft{task: t, where: where, line: item.Line})
	}
	return out, nil
}

func parseItem(m *yaml.Node, kind state.TaskKind, where string) (state.Task, error) {
	t := state.Task{Kind: kind}
	fail := func(n *yaml.Node, field, msg string) (state.Task, error) {
		return state.Task{}, &Error{Where: where, Line: n.Line, Field: field, Msg: msg}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return fail(k, "", "field names must be plain words")
		}
		name := k.Value
		if seen[name] {
			return fail(k, name, "given twice")
		}
		seen[name] = true
		switch name {
		case "title", "description", "epic":
			if name == "epic" && kind == state.KindEpic {
				return fail(k, name, "an epic cannot belong to an epic")
			}
			s, ok := text(v)
			if !ok {
				return fail(v, name, "want text")
			}
			check, dst := checkTitle, &t.Title
			switch name {
			case "description":
				check, dst = checkDescription, &t.Description
			case "epic":
				check, dst = checkRef, &t.Epic
			}
			if msg := check(s); msg != "" {
				return fail(v, name, msg)
			}
			*dst = strings.TrimSpace(s)
		case "depends_on":
			refs, bad, msg := refList(v)
			if msg != "" {
				return fail(bad, name, msg)
			}
			t.DependsOn = refs
		case "points":
			f, msg := number(v)
			if msg != "" {
				return fail(v, name, msg)
			}
			t.Points = f
		default:
			return fail(k, "", fmt.Sprintf("unknown field %q (known: %s)", name, strings.Join(knownFields, ", ")))
		}
	}
	if !seen["title"] {
		return fail(m, "title", "required")
	}
	return t, nil
}

// text reads a scalar as text; null reads as "".
func text(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Tag == "!!null" {
		return "", true
	}
	return n.Value, true
}

// refList reads depends_on: a list of scalars or a single scalar.
func refList(n *yaml.Node) ([]string, *yaml.Node, string) {
	items := []*yaml.Node{n}
	switch n.Kind {
	case yaml.SequenceNode:
		items = n.Content
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil, ""
		}
	default:
		return nil, n, "want a list of task titles or ids"
	}
	var out []string
	for _, it := range items {
		s, ok := text(it)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, it, "want a list of task titles or ids"
		}
		if msg := checkRef(s); msg != "" {
			return nil, it, msg
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out, nil, ""
}

// number reads points: a YAML int or float; null reads as 0 (unset).
func number(n *yaml.Node) (float64, string) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return 0, ""
	}
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, "want a number"
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return 0, "want a number"
	}
	if msg := checkPoints(f); msg != "" {
		return 0, msg
	}
	return f, ""
}

// noAliases rejects anchors and aliases anywhere in the tree.
func noAliases(n *yaml.Node, where string) error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return &Error{Where: where, Line: n.Line, Msg: "YAML anchors and aliases are not allowed"}
	}
	for _, c := range n.Content {
		if err := noAliases(c, where); err != nil {
			return err
		}
	}
	return nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError rewrites a YAML syntax error as an Error with its line.
func yamlError(where string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Where: where, Line: line, Msg: m[2]}
	}
	return &Error{Where: where, Msg: strings.TrimPrefix(msg, "yaml: ")}
}
