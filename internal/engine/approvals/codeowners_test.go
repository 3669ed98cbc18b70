package approvals

import (
	"strings"
	"testing"
)

const sampleCodeOwners = `# Lines starting with '#' are comments.
*                 @acme/everyone
*.js              @js-owner        # inline comments end the line
/build/logs/      @doctocat
docs/*            docs@example.com
apps/             @octocat
/docs/            @doctocat
/scripts/         @doctocat @octocat
**/logs           @octocat
/apps/github
/src/**/api.go    @acme/api
`

func TestCodeOwnersLastMatchWins(t *testing.T) {
	c := ParseCodeOwners(sampleCodeOwners + "docs/*.txt docs@example.com\n")
	if o, pat := c.Owners("docs/deep/a.txt"); pat != "/docs/" {
		t.Errorf("docs/deep/a.txt: %v by %q; docs/*.txt matches no nested file", o, pat)
	}
	if o, pat := c.Owners("docs/a.txt"); pat != "docs/*.txt" || o[0] != "docs@example.com" {
		t.Errorf("docs/a.txt: %v by %q", o, pat)
	}
	cases := []struct{ path, owners, pattern string }{
		{"README.md", "@acme/everyone", "*"},
		{"web/app.js", "@js-owner", "*.js"},
		{"build/logs/x.txt", "@octocat", "**/logs"}, // the later **/logs wins
		{"docs/getting-started.md", "@doctocat", "/docs/"},
		{"docs/build-app/troubleshooting.md", "@doctocat", "/docs/"},
		{"lib/docs/a.md", "@acme/everyone", "*"}, // a slash inside anchors docs/* at the root
		{"docs/deep/a.md", "@doctocat", "/docs/"},
		{"apps/x/y.go", "@octocat", "apps/"},
		{"src/apps/z.go", "@octocat", "apps/"},
		{"apps/github/z.go", "", "/apps/github"}, // a pattern without owners: unowned
		{"scripts/run.sh", "@doctocat @octocat", "/scripts/"},
		{"deeply/nested/logs/a", "@octocat", "**/logs"},
		{"src/api.go", "@acme/api", "/src/**/api.go"},
		{"src/a/b/api.go", "@acme/api", "/src/**/api.go"},
		{"lib/src/api.go", "@acme/everyone", "*"},
	}
	for _, k := range cases {
		owners, pattern := c.Owners(k.path)
		if strings.Join(owners, " ") != k.owners || pattern != k.pattern {
			t.Errorf("%s: owners %v by %q, want %q by %q", k.path, owners, pattern, k.owners, k.pattern)
		}
	}
}

func TestCodeOwnersIgnoreWhatGitHubIgnores(t *testing.T) {
	c := ParseCodeOwners("!*.md @neg\n[abc].go @range\n\\#x @esc\nfoo.go  @a @acme/b not-an-owner\n")
	for _, p := range []string{"a.md", "a.go", "#x"} {
		if o, pat := c.Owners(p); len(o) != 0 {
			t.Errorf("%s: owners %v by %q; negation, ranges and escapes are not CODEOWNERS syntax", p, o, pat)
		}
	}
	if o, _ := c.Owners("foo.go"); strings.Join(o, " ") != "@a @acme/b" {
		t.Errorf("foo.go: %v, want @a @acme/b (words that are no owner are left out)", o)
	}
}

func TestOwnersOfChangedFiles(t *testing.T) {
	c := ParseCodeOwners(sampleCodeOwners)
	owners, paths := c.OwnersOf([]string{"web/app.js", "web/b.js", "scripts/run.sh", "apps/github/x"})
	if strings.Join(owners, " ") != "@js-owner @doctocat @octocat" {
		t.Fatalf("owners %v", owners)
	}
	if paths["@js-owner"] != "*.js" || paths["@octocat"] != "/scripts/" {
		t.Fatalf("paths %v", paths)
	}
}

// FuzzCodeOwners: any text parses, and every owner of any path is an
// owner token written on some line of the file.
func FuzzCodeOwners(f *testing.F) {
	f.Add(sampleCodeOwners, "docs/a.md")
	f.Add("**/**/* @x\n/a/**/ @y\n", "a/b/c")
	f.Add("* @a\n\x00 @b\n", "\x00")
	f.Fuzz(func(t *testing.T, text, path string) {
		c := ParseCodeOwners(text)
		owners, pattern := c.Owners(path)
		for _, o := range owners {
			if !strings.Contains(text, o) || !isOwner(o) {
				t.Fatalf("owner %q (pattern %q) is not an owner written in the file", o, pattern)
			}
		}
		if len(owners) > 0 && !strings.Contains(text, strings.TrimPrefix(pattern, "")) {
			t.Fatalf("pattern %q is not in the file", pattern)
		}
	})
}
