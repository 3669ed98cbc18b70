package fakegithub

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	docLabels      = "https://docs.github.com/rest/issues/labels"
	maxLabelName   = 50
	maxLabelDesc   = 100
	autoLabelColor = "ededed" // GitHub's colour for labels created by adding them to an issue
)

var hexColor = regexp.MustCompile(`^[0-9a-fA-F]{6}$`)

func (s *Server) listLabels(c *call) reply {
	ls := slices.Clone(c.repo.labels)
	slices.SortFunc(ls, func(a, b *label) int { return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)) })
	return paged(s, c, ls, func(l *label) obj { return s.labelJSON(c.repo, l) })
}

func (s *Server) getLabel(c *call) reply {
	l := c.repo.label(c.params["name"])
	if l == nil {
		return notFound()
	}
	return ok(s.labelJSON(c.repo, l))
}

type labelInput struct {
	Name        *string `json:"name"`
	NewName     *string `json:"new_name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

// check validates a label definition like GitHub's create/update endpoints.
func (in labelInput) check(doc string) (reply, bool) {
	var errs []fieldError
	if in.Name != nil && utf8.RuneCountInString(*in.Name) > maxLabelName {
		errs = append(errs, fieldError{"resource": "Label", "code": "custom", "field": "name",
			"message": "name is too long (maximum is 50 characters)"})
	}
	if in.Color != nil && !hexColor.MatchString(strings.TrimPrefix(*in.Color, "#")) {
		errs = append(errs, fieldError{"resource": "Label", "code": "invalid", "field": "color"})
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > maxLabelDesc {
		errs = append(errs, fieldError{"resource": "Label", "code": "custom", "field": "description",
			"message": "description is too long (maximum is 100 characters)"})
	}
	if len(errs) > 0 {
		return validation(doc, errs...), true
	}
	return reply{}, false
}

func (s *Server) createLabel(c *call) reply {
	var in labelInput
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	doc := docLabels + "#create-a-label"
	if in.Name == nil || *in.Name == "" {
		return validation(doc, fieldError{"resource": "Label", "code": "missing_field", "field": "name"})
	}
	if rep, bad := in.check(doc); bad {
		return rep
	}
	if c.repo.label(*in.Name) != nil {
		return validation(doc, fieldError{"resource": "Label", "code": "already_exists", "field": "name"})
	}
	l := s.newLabel(c.repo, *in.Name)
	if in.Color != nil {
		l.color = strings.TrimPrefix(*in.Color, "#")
	}
	if in.Description != nil {
		l.description = *in.Description
	}
	return created(s.labelJSON(c.repo, l))
}

func (s *Server) updateLabel(c *call) reply {
	l := c.repo.label(c.params["name"])
	if l == nil {
		return notFound()
	}
	var in labelInput
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	if in.NewName == nil {
		in.NewName = in.Name // older clients (go-github) send "name"
	}
	in.Name = in.NewName
	if rep, bad := in.check(docLabels + "#update-a-label"); bad {
		return rep
	}
	if in.NewName != nil {
		if other := c.repo.label(*in.NewName); other != nil && other != l {
			return validation(docLabels+"#update-a-label",
				fieldError{"resource": "Label", "code": "already_exists", "field": "name"})
		}
		l.name = *in.NewName
	}
	if in.Color != nil {
		l.color = strings.TrimPrefix(*in.Color, "#")
	}
	if in.Description != nil {
		l.description = *in.Description
	}
	return ok(s.labelJSON(c.repo, l))
}

func (s *Server) newLabel(rp *repository, name string) *label {
	l := &label{id: s.newID(), name: name, color: autoLabelColor}
	rp.labels = append(rp.labels, l)
	return l
}

func (s *Server) listIssueLabels(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	return paged(s, c, is.labels, func(l *label) obj { return s.labelJSON(c.repo, l) })
}

// labelNames accepts both body forms GitHub takes: a bare array of names,
// or {"labels": [name | {"name": name}]}.
func labelNames(body []byte) ([]string, bool) {
	var bare []string
	if json.Unmarshal(body, &bare) == nil {
		return bare, true
	}
	var wrapped struct {
		Labels []json.RawMessage `json:"labels"`
	}
	if json.Unmarshal(body, &wrapped) != nil {
		return nil, false
	}
	names := make([]string, 0, len(wrapped.Labels))
	for _, raw := range wrapped.Labels {
		var n string
		var o struct {
			Name string `json:"name"`
		}
		switch {
		case json.Unmarshal(raw, &n) == nil:
		case json.Unmarshal(raw, &o) == nil:
			n = o.Name
		default:
			return nil, false
		}
		names = append(names, n)
	}
	return names, true
}

func (s *Server) addIssueLabels(c *call) reply { return s.changeIssueLabels(c, false) }
func (s *Server) setIssueLabels(c *call) reply { return s.changeIssueLabels(c, true) }

func (s *Server) changeIssueLabels(c *call, replace bool) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	names, good := labelNames(c.body)
	if !good {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON", docRoot)
	}
	doc := docLabels + "#add-labels-to-an-issue"
	if replace {
		doc = docLabels + "#set-labels-for-an-issue"
	}
	var bad bool
	var rep reply
	if replace {
		rep, bad = s.setLabels(c.repo, is, names, doc)
	} else {
		rep, bad = s.setLabels(c.repo, is, append(labelNamesOf(is), names...), doc)
	}
	if bad {
		return rep
	}
	is.updated = s.now()
	return ok(s.labelsJSON(c.repo, is.labels))
}

func labelNamesOf(is *issue) []string {
	names := make([]string, len(is.labels))
	for i, l := range is.labels {
		names[i] = l.name
	}
	return names
}

// setLabels replaces the issue's labels, creating missing repository labels
// with GitHub's default colour. Nothing changes when a name is invalid.
func (s *Server) setLabels(rp *repository, is *issue, names []string, doc string) (reply, bool) {
	for _, n := range names {
		if n == "" || utf8.RuneCountInString(n) > maxLabelName {
			return validation(doc, fieldError{"value": n, "resource": "Label", "field": "name", "code": "invalid"}), true
		}
	}
	var ls []*label
	for _, n := range names {
		l := rp.label(n)
		if l == nil {
			l = s.newLabel(rp, n)
		}
		if !slices.Contains(ls, l) {
			ls = append(ls, l)
		}
	}
	is.labels = ls
	return reply{}, false
}

// removeIssueLabel answers 404 "Label does not exist" when the issue does
// not carry the label, else the remaining labels.
func (s *Server) removeIssueLabel(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	i := slices.IndexFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, c.params["name"]) })
	if i < 0 {
		return errorReply(http.StatusNotFound, "Label does not exist", docLabels+"#remove-a-label-from-an-issue")
	}
	is.labels = slices.Delete(slices.Clone(is.labels), i, i+1)
	is.updated = s.now()
	return ok(s.labelsJSON(c.repo, is.labels))
}
