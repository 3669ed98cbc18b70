package fakegithub

import (
	"net/http"
	"slices"
	"strings"
)

// listInstallationRepos serves GET /installation/repositories for an
// installation token: the repositories the installation covers, sorted by
// full name, paged like GitHub (page, per_page, Link) inside GitHub's
// {total_count, repository_selection, repositories} object. Other tokens
// are refused with 403, as GitHub does.
func (s *Server) listInstallationRepos(c *call) reply {
	var in *installation
	for _, a := range s.apps {
		for _, i := range a.installations {
			if c.tok.id.InstallationID != 0 && i.id == c.tok.id.InstallationID {
				in = i
			}
		}
	}
	if in == nil {
		return errorReply(http.StatusForbidden,
			"You must authenticate with an installation access token in order to list repositories for an installation.", docRoot)
	}
	var repos []*repository
	for _, rp := range s.repos {
		if in.covers(rp.fullName()) && c.tok.id.canSee(rp.fullName()) {
			repos = append(repos, rp)
		}
	}
	slices.SortFunc(repos, func(a, b *repository) int {
		return strings.Compare(strings.ToLower(a.fullName()), strings.ToLower(b.fullName()))
	})
	lo, hi, link := s.pageBounds(c, len(repos))
	list := make([]obj, 0, hi-lo)
	for _, rp := range repos[lo:hi] {
		list = append(list, s.repoJSON(rp))
	}
	rep := ok(obj{"total_count": len(repos), "repository_selection": s.installationJSON(in)["repository_selection"], "repositories": list})
	if link != "" {
		rep.set("Link", link)
	}
	return rep
}
