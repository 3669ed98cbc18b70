// Package dashboard serves the operators' dashboard on the admin address
// (ADMIN_ADDR): the open autopilot issues by installation and repository,
// one page per issue with an SVG timeline, and the service's health. It is
// server-rendered html/template with a little inline CSS and no script.
//
// Every page is drawn from the read model (package store, fed at the end
// of each pass) and from what the server already measures (its
// Prometheus registry): a page load never calls the GitHub API for data.
// The only GitHub calls are the sign-in's (access.go): a user's token and,
// once per repository until it expires, whether that user can read it.
//
// It must never render a user-controlled string outside html/template's
// contextual escaping, and never answer an exposed request without a
// signed-in user (see Options.Exposed).
package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Options configures the dashboard.
type Options struct {
	// Store holds the rows (required).
	Store store.Store
	// Health reads the service's health (optional: "not measured").
	Health *Health
	// Held, when set, says which of the installations' background work
	// (the sweep, tracker backfills) waits for the GitHub budget now, read
	// from the shared budget record when a page is drawn (budget.Held):
	// their issues say so on the list and their own pages.
	Held func(ctx context.Context, installations []int64) ([]BudgetWait, error)
	// Exposed: the admin address is not loopback. Every request is then
	// refused unless SignIn is set, and with it only signed-in users see
	// the repositories they can read.
	Exposed bool
	// SignIn is GitHub sign-in with the App's OAuth client (optional).
	SignIn *SignIn
	// Now defaults to time.Now (ages are computed at render time).
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Dashboard is the dashboard's HTTP handler.
type Dashboard struct {
	o    Options
	mux  *http.ServeMux
	rows rowCache
}

// New builds the dashboard.
func New(o Options) (*Dashboard, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("dashboard: Options.Store is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := &Dashboard{o: o, mux: http.NewServeMux()}
	d.mux.HandleFunc("GET /{$}", d.list)
	d.mux.HandleFunc("GET /issues/{owner}/{repo}/{n}", d.issue)
	d.mux.HandleFunc("GET /health", d.health)
	if o.SignIn != nil {
		d.mux.HandleFunc("GET /login", d.login)
		d.mux.HandleFunc("GET /callback", d.callback)
		d.mux.HandleFunc("POST /logout", d.logout)
	}
	return d, nil
}

// ServeHTTP implements http.Handler: the access rules, then the page.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if d.o.Exposed && d.o.SignIn == nil {
		http.Error(w, "dashboard refused: ADMIN_ADDR is not a loopback address and GitHub sign-in is not configured. "+
			"Set DASHBOARD_CLIENT_ID and DASHBOARD_CLIENT_SECRET (the App's OAuth client), or bind ADMIN_ADDR to 127.0.0.1 and use a port-forward.",
			http.StatusForbidden)
		return
	}
	if d.o.SignIn != nil && d.o.Exposed {
		switch r.URL.Path {
		case "/login", "/callback":
			d.mux.ServeHTTP(w, r)
			return
		}
		u, ok := d.o.SignIn.user(r)
		if !ok {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusFound)
				return
			}
			http.Error(w, "sign in first: GET /login", http.StatusUnauthorized)
			return
		}
		r = r.WithContext(withViewer(r.Context(), u))
	}
	d.mux.ServeHTTP(w, r)
}

// viewer is the signed-in user of a request (none on localhost).
type viewerKey struct{}

func withViewer(ctx context.Context, u *session) context.Context {
	return context.WithValue(ctx, viewerKey{}, u)
}

func viewerOf(r *http.Request) *session {
	u, _ := r.Context().Value(viewerKey{}).(*session)
	return u
}

// visible keeps the rows the request may see: all on localhost, the
// repositories the signed-in user can read otherwise.
func (d *Dashboard) visible(r *http.Request, rows []model.Row) []model.Row {
	u := viewerOf(r)
	if u == nil {
		return rows
	}
	return slices.DeleteFunc(rows, func(row model.Row) bool { return !d.o.SignIn.canRead(r.Context(), u, row.Repo) })
}

// filter is the list page's query.
type filter struct {
	Repo   string
	Status string
	// Login is whose decisions "waiting for me" shows: the signed-in
	// user, or ?login= on localhost.
	Login   string
	Waiting bool
}

func (d *Dashboard) filterOf(r *http.Request) filter {
	q := r.URL.Query()
	f := filter{Repo: q.Get("repo"), Status: q.Get("status"), Waiting: q.Get("waiting") == "me"}
	if u := viewerOf(r); u != nil {
		f.Login = u.Login
	} else if !d.o.Exposed {
		f.Login = strings.TrimPrefix(strings.TrimSpace(q.Get("login")), "@")
	}
	if f.Login != "" && q.Has("login") {
		f.Waiting = true
	}
	return f
}

func (f filter) keep(r model.Row) bool {
	if f.Repo != "" && !strings.EqualFold(f.Repo, r.Repo) {
		return false
	}
	if f.Status != "" && f.Status != string(r.Status) {
		return false
	}
	if f.Waiting && !r.Wait.Waits(f.Login) {
		return false
	}
	return true
}

// group is one repository's rows.
type group struct {
	Installation int64
	Repo         string
	Rows         []rowView
}

// rowView is a row's cached halves and its age for this render.
type rowView struct {
	Pre, Post template.HTML
	WaitAge   string
	// Held says the installation's background sync waits for its budget
	// (drawn each time, like the age: it changes without the row).
	Held string
}

// listPage is the list template's data.
type listPage struct {
	page
	Filter   filter
	Repos    []string
	Statuses []state.RunStatus
	Groups   []group
	Shown    int
	Total    int
	Counts   map[state.RunStatus]int
	Tracker  int
	// Pager is the page's place in the rows shown (nil: they fit one page).
	Pager *pager
	// Held lists the installations of the rows whose background sync
	// waits for the budget (the banner); HeldUnread says why that could
	// not be read ("": it was, or no budget is known).
	Held       []BudgetWait
	HeldUnread string
}

// page is what every template shows in its frame.
type page struct {
	Title  string
	Viewer string
	SignIn bool
	Now    string
}

func (d *Dashboard) frame(r *http.Request, title string) page {
	p := page{Title: title, SignIn: d.o.SignIn != nil && d.o.Exposed, Now: d.o.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	if u := viewerOf(r); u != nil {
		p.Viewer = u.Login
	}
	return p
}

var statuses = []state.RunStatus{state.RunAwaitingDecision, state.RunInProgress, state.RunFailed, state.RunStopped, state.RunDone}

func (d *Dashboard) list(w http.ResponseWriter, r *http.Request) {
	rows, err := d.o.Store.List(r.Context())
	if err != nil {
		d.fail(w, "the read model", err)
		return
	}
	keys := make(map[string]bool, len(rows))
	for _, row := range rows {
		keys[row.Key()] = true
	}
	d.rows.keep(keys)
	rows = d.visible(r, rows)
	f := d.filterOf(r)
	now := d.o.Now()
	p := listPage{page: d.frame(r, "autopilot"), Filter: f, Statuses: statuses, Total: len(rows), Counts: map[state.RunStatus]int{}}
	seen := map[string]bool{}
	var shown []model.Row
	for _, row := range rows {
		if !seen[row.Repo] {
			seen[row.Repo] = true
			p.Repos = append(p.Repos, row.Repo)
		}
		p.Counts[row.Status]++
		if len(row.TrackerWaiting) > 0 {
			p.Tracker++
		}
		if f.keep(row) {
			shown = append(shown, row)
		}
	}
	p.Shown = len(shown)
	held := map[int64]string{}
	p.Held, p.HeldUnread = d.held(r.Context(), rows)
	for _, w := range p.Held {
		held[w.Installation] = w.Text()
	}
	// Installation, then repository and issue (the store's order): the
	// order the groups are drawn in, so a page never splits it differently.
	slices.SortStableFunc(shown, func(a, b model.Row) int { return cmp.Compare(a.Installation, b.Installation) })
	from, to := p.cut(r.URL.Query(), len(shown))
	for _, row := range shown[from:to] {
		v, err := d.rows.view(row)
		if err != nil {
			d.fail(w, "the list", err)
			return
		}
		if row.Wait != nil && !row.Wait.Since.IsZero() {
			v.WaitAge = Age(now.Sub(row.Wait.Since))
		}
		v.Held = held[row.Installation]
		if n := len(p.Groups); n == 0 || p.Groups[n-1].Repo != row.Repo || p.Groups[n-1].Installation != row.Installation {
			p.Groups = append(p.Groups, group{Installation: row.Installation, Repo: row.Repo})
		}
		g := &p.Groups[len(p.Groups)-1]
		g.Rows = append(g.Rows, v)
	}
	d.render(w, r, "list", p)
}

// issuePath is the dashboard's page of a row.
func issuePath(r model.Row) string {
	owner, repo, _ := strings.Cut(r.Repo, "/")
	return "/issues/" + urlPathEscape(owner) + "/" + urlPathEscape(repo) + "/" + strconv.Itoa(r.Issue)
}

// issuePage is the issue template's data.
type issuePage struct {
	page
	Row     model.Row
	WaitAge string
	SVG     timelineSVG
	// Held says the installation's background sync waits for its budget;
	// HeldUnread why that could not be read.
	Held, HeldUnread string
}

func (d *Dashboard) issue(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n <= 0 {
		http.Error(w, "issue number: want a positive integer, got "+strconv.Quote(r.PathValue("n")), http.StatusBadRequest)
		return
	}
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	row, ok, err := d.o.Store.Get(r.Context(), model.Key(repo, n))
	if err != nil {
		d.fail(w, "the read model", err)
		return
	}
	if ok && len(d.visible(r, []model.Row{row})) == 0 {
		ok = false
	}
	if !ok {
		http.Error(w, fmt.Sprintf("%s#%d is not an open autopilot issue (closed, unlabelled, not yet reconciled, or not readable by you)", repo, n), http.StatusNotFound)
		return
	}
	p := issuePage{page: d.frame(r, fmt.Sprintf("%s#%d", row.Repo, row.Issue)), Row: row, SVG: layout(row.Timeline)}
	if row.Wait != nil && !row.Wait.Since.IsZero() {
		p.WaitAge = Age(d.o.Now().Sub(row.Wait.Since))
	}
	held, unread := d.held(r.Context(), []model.Row{row})
	if len(held) > 0 {
		p.Held = held[0].Text()
	}
	p.HeldUnread = unread
	d.render(w, r, "issue", p)
}

// held asks Options.Held once about the installations of rows (each
// once, in order); a failed read is the text the page shows instead.
func (d *Dashboard) held(ctx context.Context, rows []model.Row) ([]BudgetWait, string) {
	if d.o.Held == nil || len(rows) == 0 {
		return nil, ""
	}
	var ids []int64
	for _, row := range rows {
		ids = append(ids, row.Installation)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	waits, err := d.o.Held(ctx, ids)
	if err != nil {
		d.o.Logger.Warn("dashboard: the GitHub budget could not be read", "err", err)
		return nil, "whether background sync waits for the GitHub budget is not known: budget not read (" + err.Error() + ")"
	}
	return waits, ""
}

func (d *Dashboard) health(w http.ResponseWriter, r *http.Request) {
	p := struct {
		page
		H HealthView
	}{page: d.frame(r, "health")}
	p.H = d.o.Health.View(d.o.Now())
	d.render(w, r, "health", p)
}

func (d *Dashboard) fail(w http.ResponseWriter, what string, err error) {
	d.o.Logger.Warn("dashboard: page failed", "what", what, "err", err)
	http.Error(w, "could not read "+what+": "+err.Error(), http.StatusServiceUnavailable)
}

func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	out, done := compressed(w, r)
	err := pages.ExecuteTemplate(out, name, data)
	if cerr := done(); err == nil {
		err = cerr
	}
	if err != nil {
		d.o.Logger.Warn("dashboard: render failed", "page", name, "err", err)
	}
}

// Age is a duration for people: "45s", "12m", "3h 05m", "2d 4h".
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Loopback reports whether the listen address addr ("host:port") is
// reachable from this host only: a loopback IP or "localhost". An empty
// host listens on every interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
