package approvals

import (
	"path"
	"regexp"
	"strings"
)

// CodeOwners is a parsed CODEOWNERS file: rules in file order, the last
// matching rule deciding a path's owners (GitHub's rule). Patterns follow
// gitignore, without what GitHub does not support in CODEOWNERS: "!"
// negation, "[ ]" ranges and "\" escapes make a line match nothing.
type CodeOwners struct {
	rules []ownerRule
}

type ownerRule struct {
	pattern  string   // as written
	segs     []string // the pattern's path segments
	anchored bool     // has a slash before its end: relative to the root
	dirOnly  bool     // ends with "/": matches a directory's contents only
	owners   []string
}

// MaxCodeOwners is the largest CODEOWNERS file GitHub reads (3 MB); text
// past it is ignored.
const MaxCodeOwners = 3 << 20

// ownerRE: a CODEOWNERS owner: @login, @org/team or an email address.
var ownerRE = regexp.MustCompile(`^(@[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?|[^@\s]+@[^@\s]+\.[^@\s]+)$`)

func isOwner(s string) bool { return ownerRE.MatchString(s) }

// ParseCodeOwners reads CODEOWNERS text. It never fails: like GitHub, it
// skips the lines it cannot use.
func ParseCodeOwners(text string) CodeOwners {
	if len(text) > MaxCodeOwners {
		text = text[:MaxCodeOwners]
	}
	var c CodeOwners
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i] // a comment, whole-line or trailing
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		r := ownerRule{pattern: fields[0]}
		for _, o := range fields[1:] {
			if isOwner(o) {
				r.owners = append(r.owners, o)
			}
		}
		p := r.pattern
		if strings.ContainsAny(p, "![]\\") {
			continue // not CODEOWNERS syntax: the line matches nothing
		}
		p, r.dirOnly = strings.CutSuffix(p, "/")
		r.anchored = strings.Contains(p, "/")
		p = strings.TrimPrefix(p, "/")
		if p == "" {
			continue
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1] == "**" {
				continue // "**/**" is "**": keeps matching linear in the stars
			}
			r.segs = append(r.segs, seg)
		}
		c.rules = append(c.rules, r)
	}
	return c
}

// Owners returns the owners of a file path (relative to the root) and the
// pattern that decided them. A last matching pattern without owners makes
// the file unowned (nil owners, that pattern).
func (c CodeOwners) Owners(file string) (owners []string, pattern string) {
	file = strings.TrimPrefix(file, "/")
	segs := strings.Split(file, "/")
	for i := len(c.rules) - 1; i >= 0; i-- {
		if r := c.rules[i]; r.match(segs) {
			return r.owners, r.pattern
		}
	}
	return nil, ""
}

// OwnersOf returns the distinct owners of files, in the order found, and
// for each owner the first pattern that made it one (the evidence).
func (c CodeOwners) OwnersOf(files []string) (owners []string, patterns map[string]string) {
	patterns = map[string]string{}
	for _, f := range files {
		os, pat := c.Owners(f)
		for _, o := range os {
			if _, seen := patterns[o]; !seen {
				patterns[o] = pat
				owners = append(owners, o)
			}
		}
	}
	return owners, patterns
}

// match reports whether the rule matches the file: the pattern matches
// the whole path, or (a directory pattern) one of its parent directories.
// An unanchored pattern may start at any depth. A last segment "*" or
// with a "*" matches files in that directory only, not nested ones.
func (r ownerRule) match(file []string) bool {
	starts := 1
	if !r.anchored {
		starts = len(file)
	}
	last := r.segs[len(r.segs)-1]
	for s := 0; s < starts; s++ {
		for e := s + 1; e <= len(file); e++ {
			isFile := e == len(file)
			if isFile && r.dirOnly {
				continue // a directory pattern: only what is under it
			}
			if !isFile && strings.Contains(last, "*") && last != "**" {
				continue // "docs/*" and "docs/*.md": direct children only
			}
			if matchSegs(r.segs, file[s:e]) {
				return true
			}
		}
	}
	return false
}

// matchSegs matches path segments against pattern segments, "**" standing
// for any number of segments (none included).
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(segs); k++ {
				if matchSegs(pat[1:], segs[k:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
