package github

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestPermissionMapping(t *testing.T) {
	perm := func(permission, role string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			reply(w, 200, patchJSON(t, fixture(t, "permission-admin.json"), func(m map[string]any) {
				m["permission"], m["role_name"] = permission, role
			}))
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    access.Level
		wantErr bool
	}{
		{"admin (GitHub's example)", status(200, fixture(t, "permission-admin.json")), access.Admin, false},
		{"write", perm("write", "write"), access.Write, false},
		{"triage reported as read", perm("read", "triage"), access.Triage, false},
		{"maintain reported as write", perm("write", "maintain"), access.Maintain, false},
		{"read", perm("read", "read"), access.Read, false},
		{"custom role falls back to permission", perm("write", "security-engineer"), access.Write, false},
		{"none", perm("none", ""), access.None, false},
		{"not a collaborator (404)", status(404, notFoundBody), access.None, false},
		{"server error is an error", status(500, serverErrorBody), "", true},
		{"forbidden is an error", status(403, forbiddenBody), "", true},
		{"unknown permission is an error", perm("superuser", ""), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", func(o *Options) { o.MaxRetries = -1 })
			e.handle("GET /repos/octocat/Hello-World/collaborators/{user}/permission", func(w http.ResponseWriter, r *http.Request) {
				if r.PathValue("user") != "monalisa" {
					t.Errorf("user = %q", r.PathValue("user"))
				}
				tt.handler(w, r)
			})
			got, err := e.client.Permission(context.Background(), "monalisa")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("permission = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPermissionServerErrorIsTransient(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/collaborators/monalisa/permission", status(503, serverErrorBody))
	_, err := e.client.Permission(context.Background(), "monalisa")
	var te *forge.TransientError
	if !errors.As(err, &te) || te.Status != 503 {
		t.Errorf("err = %v, want TransientError 503 (callers defer and fail closed)", err)
	}
}

func TestReadFile(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		handler   http.HandlerFunc
		wantData  string
		wantFound bool
		wantErr   bool
	}{
		{"raw content", "README.md", func(w http.ResponseWriter, r *http.Request) {
			if got := r.Header.Get("Accept"); got != "application/vnd.github.raw+json" {
				t.Errorf("Accept = %q", got)
			}
			w.Header().Set("Content-Type", "application/vnd.github.v3.raw; charset=utf-8")
			_, _ = w.Write(fixture(t, "readme-raw.md"))
		}, "# hello-world", true, false},
		{"missing file", ".github/autopilot.yml", status(404, notFoundBody), "", false, false},
		{"server error", ".github/autopilot.yml", status(500, serverErrorBody), "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "/api/v3", func(o *Options) { o.MaxRetries = -1 })
			e.handle("GET /repos/octocat/Hello-World/contents/"+tt.path, tt.handler)
			data, found, err := e.client.ReadFile(context.Background(), tt.path)
			if (err != nil) != tt.wantErr || found != tt.wantFound || string(data) != tt.wantData {
				t.Errorf("ReadFile = %q, %v, %v", data, found, err)
			}
			if q := e.requests()[0].Query; q != "" {
				t.Errorf("query %q: the default branch is read without ref", q)
			}
		})
	}
}

func TestReadFileRejectsTraversal(t *testing.T) {
	e := newEnv(t, "", nil)
	for _, p := range []string{"", "../secrets", "a//b", "./x"} {
		if _, _, err := e.client.ReadFile(context.Background(), p); err == nil {
			t.Errorf("ReadFile(%q) accepted", p)
		}
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}
