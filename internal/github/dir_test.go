package github

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// rootListing is the root directory answer recorded in @octokit/fixtures
// (scenario get-content, MIT), with a directory and a submodule added in
// the same shape so the names of every entry type are exercised.
const rootListing = `[
 {"name":"README.md","path":"README.md","sha":"93a078d1c3f76aa1ca11def8f882a06df1d4a01b","size":13,
  "url":"https://api.github.com/repos/octocat/Hello-World/contents/README.md?ref=master",
  "html_url":"https://github.com/octocat/Hello-World/blob/master/README.md",
  "git_url":"https://api.github.com/repos/octocat/Hello-World/git/blobs/93a078d1c3f76aa1ca11def8f882a06df1d4a01b",
  "download_url":"https://raw.githubusercontent.com/octocat/Hello-World/master/README.md","type":"file",
  "_links":{"self":"https://api.github.com/repos/octocat/Hello-World/contents/README.md?ref=master",
   "git":"https://api.github.com/repos/octocat/Hello-World/git/blobs/93a078d1c3f76aa1ca11def8f882a06df1d4a01b",
   "html":"https://github.com/octocat/Hello-World/blob/master/README.md"}},
 {"name":"_docs","path":"_docs","sha":"5b6e2bd2c4c1a0d1f1c4a3b8e1f0f7e0d2c3b4a5","size":0,
  "url":"https://api.github.com/repos/octocat/Hello-World/contents/_docs?ref=master",
  "html_url":"https://github.com/octocat/Hello-World/tree/master/_docs","type":"dir"},
 {"name":".gitmodules","path":".gitmodules","sha":"0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4","size":97,
  "url":"https://api.github.com/repos/octocat/Hello-World/contents/.gitmodules?ref=master","type":"file"}
]`

// fileObject is what the contents API returns for a path that is a file.
const fileObject = `{"type":"file","encoding":"base64","size":13,"name":"README.md","path":"README.md",
 "content":"IyBoZWxsby13b3JsZA==\n","sha":"93a078d1c3f76aa1ca11def8f882a06df1d4a01b"}`

func TestListDir(t *testing.T) {
	tests := []struct {
		name      string
		dir       string
		path      string // request path the client must use
		handler   http.HandlerFunc
		want      []string
		wantFound bool
		wantErr   bool
	}{
		{"root is contents/ with a trailing slash", "", "/repos/octocat/Hello-World/contents/",
			status(200, []byte(rootListing)), []string{".gitmodules", "README.md", "_docs"}, true, false},
		{"subdirectory", "_docs", "/repos/octocat/Hello-World/contents/_docs",
			status(200, []byte(`[{"name":"_repo-config.yaml","path":"_docs/_repo-config.yaml","type":"file"}]`)),
			[]string{"_repo-config.yaml"}, true, false},
		{"slashes around the directory are ignored", "/_docs/", "/repos/octocat/Hello-World/contents/_docs",
			status(200, []byte(`[]`)), []string{}, true, false},
		{"missing directory is not found", "nope", "/repos/octocat/Hello-World/contents/nope",
			status(404, notFoundBody), nil, false, false},
		{"empty repository is not found", "", "/repos/octocat/Hello-World/contents/",
			status(404, []byte(`{"message":"This repository is empty.","documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","status":"404"}`)),
			nil, false, false},
		{"a file is not a directory", "README.md", "/repos/octocat/Hello-World/contents/README.md",
			status(200, []byte(fileObject)), nil, false, false},
		{"server error is an error", "", "/repos/octocat/Hello-World/contents/",
			status(500, serverErrorBody), nil, false, true},
		{"forbidden is an error", "", "/repos/octocat/Hello-World/contents/",
			status(403, forbiddenBody), nil, false, true},
		{"garbage listing is an error", "", "/repos/octocat/Hello-World/contents/",
			status(200, []byte(`[{"name":1}]`)), nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", func(o *Options) { o.MaxRetries = -1 })
			e.handle("GET "+tt.path, tt.handler)
			got, found, err := e.client.ListDir(context.Background(), tt.dir)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if found != tt.wantFound || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListDir(%q) = %q, found %v; want %q, found %v", tt.dir, got, found, tt.want, tt.wantFound)
			}
			reqs := e.requests()
			if len(reqs) != 1 || reqs[0].Path != tt.path {
				t.Fatalf("requests = %+v, want one GET %s", reqs, tt.path)
			}
			if reqs[0].Header.Get("Accept") == "application/vnd.github.raw+json" {
				t.Error("a listing must not ask for the raw media type")
			}
		})
	}
}

func TestListDirErrorsAreForgeErrors(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MaxRetries = -1 })
	e.handle("GET /repos/octocat/Hello-World/contents/", status(403, forbiddenBody))
	_, _, err := e.client.ListDir(context.Background(), "")
	if !errors.Is(err, forge.ErrForbidden) {
		t.Errorf("err = %v, want forge.ErrForbidden", err)
	}
}

func TestListDirIsConditional(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/contents/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `W/"root-1"` {
			reply(w, 304, nil, `ETag: W/"root-1"`)
			return
		}
		reply(w, 200, []byte(rootListing), `ETag: W/"root-1"`)
	})
	for i := 0; i < 2; i++ {
		got, found, err := e.client.ListDir(context.Background(), "")
		if err != nil || !found || len(got) != 3 {
			t.Fatalf("call %d: ListDir = %q, %v, %v", i, got, found, err)
		}
	}
	if st := e.client.Stats(); st.ConditionalHits != 1 {
		t.Errorf("conditional hits = %d, want 1 (the second listing is a free 304)", st.ConditionalHits)
	}
}

func TestListDirRejectsTraversal(t *testing.T) {
	e := newEnv(t, "", nil)
	for _, p := range []string{"../secrets", "a//b", "./x", "a/../b"} {
		if _, _, err := e.client.ListDir(context.Background(), p); err == nil {
			t.Errorf("ListDir(%q) accepted", p)
		}
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests for invalid paths", n)
	}
}

// TestListDirOnFakeGitHub checks the shape against the shared fake, which
// serves subdirectory listings from the files it holds.
func TestListDirOnFakeGitHub(t *testing.T) {
	srv := fakegithub.New(fakegithub.Options{})
	t.Cleanup(srv.Close)
	const repo = "acme/widgets"
	if err := srv.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	srv.AddActionsToken("ghs_x", repo)
	for _, f := range []string{"_docs/_repo-config.yaml", "_docs/guide/intro.md", "src/main.go"} {
		if err := srv.SetFile(repo, f, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(Options{Repo: repo, Token: "ghs_x", BaseURL: srv.URL(), MinMutationGap: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := c.ListDir(context.Background(), "_docs")
	if err != nil || !found || !reflect.DeepEqual(got, []string{"_repo-config.yaml", "guide"}) {
		t.Errorf("ListDir(_docs) = %q, %v, %v", got, found, err)
	}
	got, found, err = c.ListDir(context.Background(), "missing")
	if err != nil || found || got != nil {
		t.Errorf("ListDir(missing) = %q, %v, %v; want not found", got, found, err)
	}
	got, found, err = c.ListDir(context.Background(), "src/main.go")
	if err != nil || found || got != nil {
		t.Errorf("ListDir(a file) = %q, %v, %v; want not found", got, found, err)
	}
}
