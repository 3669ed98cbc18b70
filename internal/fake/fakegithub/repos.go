package fakegithub

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
)

func (s *Server) getRepo(c *call) reply { return ok(s.repoJSON(c.repo)) }

// legacyPermission maps a role to the collaborator API's permission field:
// maintain reads as write and triage as read.
func legacyPermission(p access.Level) string {
	switch p {
	case access.Maintain:
		return "write"
	case access.Triage:
		return "read"
	}
	return string(p)
}

// effectivePermission is the user's role: explicit, owner (admin), or the
// base of a public (read) or private (none) repository.
func effectivePermission(rp *repository, login string) access.Level {
	if p, ok := rp.perms[strings.ToLower(login)]; ok {
		return p
	}
	if strings.EqualFold(login, rp.owner) {
		return access.Admin
	}
	if rp.private {
		return access.None
	}
	return access.Read
}

// getPermission serves GET .../collaborators/{user}/permission.
func (s *Server) getPermission(c *call) reply {
	login := c.params["user"]
	u := s.users[strings.ToLower(login)]
	if u == nil {
		return errorReply(http.StatusNotFound, login+" is not a user",
			"https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user")
	}
	p := effectivePermission(c.repo, login)
	collab := s.userJSON(u)
	collab["role_name"] = string(p)
	collab["permissions"] = obj{
		"admin": p.AtLeast(access.Admin), "maintain": p.AtLeast(access.Maintain),
		"push": p.AtLeast(access.Write), "triage": p.AtLeast(access.Triage), "pull": p.AtLeast(access.Read),
	}
	return ok(obj{"permission": legacyPermission(p), "role_name": string(p), "user": collab})
}

// blobSHA is git's object id for the content, as GitHub reports it.
func blobSHA(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// getContents serves a file as base64 JSON (or raw bytes with
// Accept: application/vnd.github.raw), a directory as a listing, else 404.
// Only the default branch exists.
func (s *Server) getContents(c *call) reply {
	rp := c.repo
	if ref := c.query.Get("ref"); ref != "" && ref != rp.defaultBranch {
		return errorReply(http.StatusNotFound, "No commit found for the ref "+ref,
			"https://docs.github.com/rest/repos/contents#get-repository-content")
	}
	p := strings.Trim(c.params["path"], "/")
	entry := func(name string, data []byte, dir bool) obj {
		typ, sha, size := "file", blobSHA(data), len(data)
		if dir {
			typ, sha, size = "dir", blobSHA([]byte(name)), 0
		}
		return obj{
			"type": typ, "name": path.Base(name), "path": name, "sha": sha, "size": size,
			"url":      s.api("/repos/%s/contents/%s?ref=%s", rp.fullName(), name, rp.defaultBranch),
			"html_url": fmt.Sprintf("%s/%s/blob/%s/%s", s.webURL, rp.fullName(), rp.defaultBranch, name),
		}
	}
	if data, found := rp.files[p]; found {
		accept := c.r.Header.Get("Accept")
		if strings.Contains(accept, "vnd.github.raw") { // raw and raw+json both return the bytes of a file
			rep := reply{status: http.StatusOK, raw: slices.Clone(data)}
			rep.set("Content-Type", "application/vnd.github.raw; charset=utf-8")
			return rep
		}
		o := entry(p, data, false)
		o["encoding"] = "base64"
		o["content"] = wrap60(base64.StdEncoding.EncodeToString(data))
		return ok(o)
	}
	var list []obj
	seen := map[string]bool{}
	for name, data := range rp.files {
		rest, found := strings.CutPrefix(name, p+"/")
		if p == "" {
			rest, found = name, true
		}
		if !found {
			continue
		}
		child, _, isDir := strings.Cut(rest, "/")
		full := strings.TrimPrefix(p+"/"+child, "/")
		if !seen[full] {
			seen[full] = true
			list = append(list, entry(full, data, isDir))
		}
	}
	if list == nil {
		return notFound()
	}
	slices.SortFunc(list, func(a, b obj) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
	return ok(list)
}

// wrap60 breaks base64 into 60-character lines, as GitHub sends it.
func wrap60(b64 string) string {
	var sb strings.Builder
	for len(b64) > 60 {
		sb.WriteString(b64[:60] + "\n")
		b64 = b64[60:]
	}
	sb.WriteString(b64 + "\n")
	return sb.String()
}
