package dashboard

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
)

// rowCache keeps each row's rendered halves (row-pre, row-post) by key,
// for as long as the row's version and time are unchanged: a list of
// 1,000 issues then costs one template run per changed row, not 1,000.
// The halves are html/template output, escaped like any page.
type rowCache struct {
	mu sync.Mutex
	m  map[string]cachedRow
}

type cachedRow struct {
	row  model.Row
	view rowView
}

// rowData is what the row templates read.
type rowData struct {
	model.Row
	Link string
}

// view returns the row's halves, rendering them when the row changed.
func (c *rowCache) view(r model.Row) (rowView, error) {
	k := r.Key()
	c.mu.Lock()
	hit, ok := c.m[k]
	c.mu.Unlock()
	if ok && hit.row.Version == r.Version && hit.row.UpdatedAt.Equal(r.UpdatedAt) && hit.row.Installation == r.Installation && hit.row.Title == r.Title {
		return hit.view, nil
	}
	data := rowData{Row: r, Link: issuePath(r)}
	var pre, post bytes.Buffer
	if err := pages.ExecuteTemplate(&pre, "row-pre", data); err != nil {
		return rowView{}, err
	}
	if err := pages.ExecuteTemplate(&post, "row-post", data); err != nil {
		return rowView{}, err
	}
	v := rowView{Pre: template.HTML(pre.String()), Post: template.HTML(post.String())}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedRow{}
	}
	c.m[k] = cachedRow{row: r, view: v}
	c.mu.Unlock()
	return v, nil
}

// keep forgets the rows not in keys (closed issues).
func (c *rowCache) keep(keys map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !keys[k] {
			delete(c.m, k)
		}
	}
}
