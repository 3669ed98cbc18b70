package doclint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, seen from this package.
const root = "../.."

func readRepo(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeOpensWithTheTwoCommands: the README starts with the demo and
// the test command, and says what the test command needs besides Go (a C
// compiler for -race; redis-server optional) before a new user meets
// "-race requires cgo".
func TestReadmeOpensWithTheTwoCommands(t *testing.T) {
	readme := readRepo(t, "README.md")
	const opening = "# autopilot\n\n```sh\ngo run ./cmd/bot demo\ngo test -race ./...\n```\n"
	if !strings.HasPrefix(readme, opening) {
		t.Errorf("README.md does not open with exactly the two set-up commands:\n%s", opening)
	}
	first := readme[:strings.Index(readme, "\n## ")]
	for _, want := range []string{"C compiler", "-race requires cgo", "`redis-server`, optional", "skip"} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's opening does not say %q (what the test command needs besides Go)", want)
		}
	}
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLinkRE = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+(\S+)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	idRE      = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeRE    = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	// placeholderRE: a link target that is a placeholder of a format,
	// such as ([comment](<link>)).
	placeholderRE = regexp.MustCompile(`^<[A-Za-z _-]+>$`)
	// mdNameRE: a Markdown file named in prose, e.g. "see RELIABILITY.md".
	mdNameRE = regexp.MustCompile(`(?:^|[\s(])([A-Za-z0-9_./-]+\.md)\b`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation other
// than - and _ dropped, spaces made hyphens.
func slug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the anchors of a Markdown file: its headings' slugs (a
// repeated heading gets -1, -2, …) and explicit <a id=…>.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
	for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, m := range idRE.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

// TestDocLinksResolve: every relative link of README.md and docs/*.md
// names a file of the repository, and its #anchor a heading of that file
// (or of the same doc), as GitHub renders them.
func TestDocLinksResolve(t *testing.T) {
	docs := glob(root, Docs)
	if len(docs) < 10 {
		t.Fatalf("found only %v", docs)
	}
	checked := 0
	for _, doc := range docs {
		md := readRepo(t, doc)
		prose := codeRE.ReplaceAllString(md, "")
		for _, m := range mdNameRE.FindAllStringSubmatch(linkRE.ReplaceAllString(prose, "]"), -1) {
			name := m[1]
			if !exists(filepath.Join(filepath.Dir(doc), name)) && !exists(name) {
				t.Errorf("%s: names %s, which the repository does not have", doc, name)
			}
		}
		var targets []string
		for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refLinkRE.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || placeholderRE.MatchString(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(strings.Trim(target, "<>"), "#")
			file := doc
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
				info, err := os.Stat(filepath.Join(root, file))
				if err != nil {
					t.Errorf("%s: link %s: %s does not exist", doc, target, file)
					continue
				}
				if info.IsDir() || anchor == "" {
					continue
				}
			}
			if !strings.HasSuffix(file, ".md") {
				continue
			}
			if !anchors(readRepo(t, file))[anchor] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", doc, target, file, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d relative links", checked)
	}
}

func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(root, rel))
	return err == nil
}

// TestDocsStatementsTheCodeOutgrew: statements the docs made about
// behaviour the code has since changed stay out. Each row says what the
// code does now.
func TestDocsStatementsTheCodeOutgrew(t *testing.T) {
	cases := []struct {
		doc, stale, now string
	}{
		{"docs/user-guide.md", "cannot list repository files",
			"flow detection lists the repository's top directory through the contents API (the engine asks, pass.Node.pickFlow; repofiles.ReadDir lists)"},
		{"docs/user-guide.md", "always picks `greenfield`",
			"detection picks meta-repo, existing-code or greenfield from the files it finds"},
		{"docs/*.md", "PRODUCT §", "the product contract is not in the repository; the docs are"},
		{"docs/app.md", "as in §4", "app.md's own §4 is about replicas; the inputs are in action.md#inputs"},
		{"docs/action.md", "the PR never gets linked", "an answer or a command on a fork's PR links it (route: Trigger.PR)"},
		{"docs/action.md", "State version, Stop reason", "the summary table's columns end Kill-switch | State version (action.writeSummary)"},
		{"README.md", "to Jira with a local fallback",
			"tasks go to the configured tracker: Jira, GitHub sub-issues, or the issue itself"},
	}
	for _, c := range cases {
		for _, doc := range glob(root, []string{c.doc}) {
			if md := readRepo(t, doc); strings.Contains(strings.Join(strings.Fields(md), " "), c.stale) {
				t.Errorf("%s still says %q; now: %s", doc, c.stale, c.now)
			}
		}
	}
	// What detection looks at, as pass.Node.pickFlow reads it.
	guide := strings.Join(strings.Fields(readRepo(t, "docs/user-guide.md")), " ")
	for _, marker := range []string{"`.gitmodules`", "`_docs/_repo-config.yaml`", "`_docs/`", "`LICENSE*`", "`.gitignore`", "`.github`", "`README.md`"} {
		if !strings.Contains(guide, marker) {
			t.Errorf("docs/user-guide.md's flow detection does not name %s, which flow detection (pass.Node.pickFlow) reads", marker)
		}
	}
}

var (
	usesRE  = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(?:#\s*(.*))?$`)
	shaPin  = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	tagNote = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	imageRE = regexp.MustCompile(`(?m)^  image: docker://ghcr\.io/autopilot-dev/autopilot:(v\d+\.\d+\.\d+)$`)
)

// TestDocsPinWhatTheyUse: every action a doc snippet or an example
// workflow uses is pinned by full commit SHA with its tag in a comment
// (docs/pinning.md); this project's own Action is pinned to one commit
// everywhere, tagged with the release action.yml runs.
func TestDocsPinWhatTheyUse(t *testing.T) {
	m := imageRE.FindStringSubmatch(readRepo(t, "action.yml"))
	if m == nil {
		t.Fatal("action.yml has no image line")
	}
	release := m[1]
	var sources []Snippet
	for _, doc := range glob(root, Docs) {
		sources = append(sources, Extract(doc, []byte(readRepo(t, doc)))...)
	}
	for _, ex := range glob(root, []string{"docs/examples/*.yml"}) {
		sources = append(sources, Snippet{Doc: ex, Line: 1, Text: readRepo(t, ex)})
	}
	ours := map[string]bool{}
	n := 0
	for _, s := range sources {
		for i, line := range strings.Split(s.Text, "\n") {
			u := usesRE.FindStringSubmatch(line)
			if u == nil || strings.HasPrefix(u[1], "./") || strings.HasPrefix(u[1], "docker://") {
				continue
			}
			n++
			ref, note, where := u[1], strings.TrimSpace(u[2]), fmt.Sprintf("%s:%d", s.Doc, s.Line+i)
			if !shaPin.MatchString(ref) || !tagNote.MatchString(note) {
				t.Errorf("%s: uses: %s # %s: pin a full commit SHA with its tag in a comment (owner/repo@<40 hex> # vX.Y.Z)", where, ref, note)
				continue
			}
			if strings.HasPrefix(ref, "autopilot-dev/autopilot@") {
				ours[ref] = true
				if note != release {
					t.Errorf("%s: %s is tagged %s, but action.yml runs %s", where, ref, note, release)
				}
			}
		}
	}
	if len(ours) != 1 {
		t.Errorf("the docs pin autopilot-dev/autopilot to %d different commits, want one: %v", len(ours), ours)
	}
	if n < 8 {
		t.Errorf("found only %d uses: lines", n)
	}
}

// TestReadmeListsEveryDoc: every page under docs/ is in the README's
// documentation list, so a new page is found from the front door.
func TestReadmeListsEveryDoc(t *testing.T) {
	readme := readRepo(t, "README.md")
	i := strings.Index(readme, "\n## Documentation\n")
	if i < 0 {
		t.Fatal("README.md has no Documentation section")
	}
	list := readme[i:]
	if j := strings.Index(list[1:], "\n## "); j >= 0 {
		list = list[:j+1]
	}
	for _, doc := range glob(root, []string{"docs/*.md"}) {
		if !strings.Contains(list, "]("+doc+")") {
			t.Errorf("README.md's documentation list does not link %s", doc)
		}
	}
}
