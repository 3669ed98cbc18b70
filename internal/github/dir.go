package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// maxDirEntries bounds a directory listing: GitHub's contents API returns
// at most 1,000 entries for a directory and does not paginate.
const maxDirEntries = 1000

// dirEntry is one member of a contents-API directory listing.
type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // file, dir, symlink, submodule
}

// ListDir lists the names directly under dir at the default branch through
// GET /repos/{o}/{r}/contents/{dir} ("" is the repository root, read as
// ".../contents/"), sorted. found is false when GitHub answers 404 (a
// missing directory, or an empty repository) or when dir names a file, not
// a directory. The listing is read conditionally on its ETag.
func (c *Client) ListDir(ctx context.Context, dir string) ([]string, bool, error) {
	what := fmt.Sprintf("list directory %q", dir)
	p := c.repoPath("contents") + "/"
	if trimmed := strings.Trim(dir, "/"); trimmed != "" {
		segments := strings.Split(trimmed, "/")
		for _, s := range segments {
			if s == "" || s == "." || s == ".." {
				return nil, false, fmt.Errorf("github %s: invalid path", what)
			}
		}
		p = c.repoPath(append([]string{"contents"}, segments...)...)
	}
	var raw json.RawMessage
	_, err := c.do(ctx, transport.Op{Kind: "GET contents", ETag: true}, http.MethodGet, p, nil, &raw, "")
	if statusOf(err) == http.StatusNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, c.mapErr(what, err)
	}
	body := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(body, "[") {
		// A file (or symlink/submodule) answers with one object.
		return nil, false, nil
	}
	var entries []dirEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, false, fmt.Errorf("github %s: decode listing: %w", what, err)
	}
	if len(entries) > maxDirEntries {
		entries = entries[:maxDirEntries]
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Name != "" {
			names = append(names, e.Name)
		}
	}
	sort.Strings(names)
	return names, true, nil
}
