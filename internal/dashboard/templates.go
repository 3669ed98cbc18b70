package dashboard

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
)

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
func urlPathEscape(s string) string  { return url.PathEscape(s) }

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	"statusClass": func(s any) string { return "s-" + classSafe(fmt.Sprint(s)) },
	"repoQ":       func(repo string) string { return "?repo=" + url.QueryEscape(repo) },
	"joinAt":      func(xs []string) string { return "@" + strings.Join(xs, ", @") },
}

// classSafe keeps the letters, digits and dashes of s (a CSS class).
func classSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, s)
}

// pages holds every page; parsed once at start (a template error is a
// programming error, caught by the tests).
var pages = template.Must(template.New("").Funcs(funcs).Parse(frameTmpl + listTmpl + rowTmpl + issueTmpl + healthTmpl))

const frameTmpl = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — autopilot dashboard</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}header .sp{flex:1}
main{padding:12px 16px;max-width:1400px}
table{border-collapse:collapse;width:100%;background:#fff;margin-bottom:16px}
table.list{table-layout:fixed}table.list td{overflow-wrap:anywhere}
table.list tbody{content-visibility:auto;contain-intrinsic-size:auto 600px}
th,td{border:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eaeef2;font-weight:600}
h2{font-size:15px;margin:16px 0 4px}
.s{display:inline-block;padding:0 6px;border-radius:10px;font-size:12px;white-space:nowrap}
.s-awaiting-decision{background:#fff8c5}.s-in-progress{background:#ddf4ff}.s-failed{background:#ffebe9}
.s-stopped{background:#eaeef2}.s-done{background:#dafbe1}
.muted{color:#656d76}.reason{color:#cf222e}.held{color:#9a6700}
form.f{display:flex;gap:8px;align-items:end;flex-wrap:wrap;margin-bottom:8px}
.sum span{margin-right:12px}
nav.pager{margin:8px 0}nav.pager a{margin:0 8px}
svg text{font:11px system-ui,sans-serif}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;background:#fff;padding:8px;border:1px solid #d0d7de}
dt{font-weight:600}
</style></head><body>
<header><a href="/">autopilot</a><a href="/health">health</a><span class="sp"></span>
{{if .Viewer}}<span>signed in as @{{.Viewer}}</span><form method="post" action="/logout"><button>sign out</button></form>{{end}}
<span class="muted">{{.Now}}</span></header><main>{{end}}
{{define "foot"}}</main></body></html>{{end}}
`

const listTmpl = `
{{define "list"}}{{template "head" .}}
<form class="f" method="get" action="/">
<label>repository<br><select name="repo"><option value="">all</option>{{range .Repos}}<option{{if eq . $.Filter.Repo}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>status<br><select name="status"><option value="">all</option>{{range .Statuses}}<option{{if eq (print .) $.Filter.Status}} selected{{end}}>{{.}}</option>{{end}}</select></label>
{{if .Viewer}}<label><input type="checkbox" name="waiting" value="me"{{if .Filter.Waiting}} checked{{end}}> waiting for me</label>
{{else}}<label>waiting for (login)<br><input name="login" value="{{.Filter.Login}}" size="14"></label>{{end}}
<button>filter</button> <a href="/">clear</a></form>
<p class="sum"><span><b>{{.Shown}}</b> of {{.Total}} open issues</span>{{range .Statuses}}<span class="s {{statusClass .}}">{{.}}: {{index $.Counts .}}</span>{{end}}<span>tasks waiting for a tracker on {{.Tracker}} issue(s)</span></p>
{{with .Held}}<p class="held">⏳ background sync waits for the GitHub budget: {{range $i, $w := .}}{{if $i}}; {{end}}installation {{$w.Installation}} until {{$w.UntilUTC}} ({{$w.Words}}){{end}}. Answers and commands go on; the sweep and tracker syncs resume then.</p>{{end}}
{{with .HeldUnread}}<p class="held muted">{{.}}</p>{{end}}
{{with .Pager}}{{template "pager" .}}{{end}}
{{range .Groups}}<h2>installation {{.Installation}} · <a href="{{repoQ .Repo}}">{{.Repo}}</a></h2>
<table class="list"><colgroup><col style="width:24%"><col style="width:7%"><col style="width:8%"><col style="width:9%"><col style="width:20%"><col style="width:12%"><col style="width:5%"><col style="width:9%"><col style="width:6%"></colgroup>
<thead><tr><th>issue</th><th>flow</th><th>step</th><th>status</th><th>waits for</th><th>from whom</th><th>for</th><th>stopped / failed</th><th>tracker</th></tr></thead><tbody>
{{range .Rows}}{{.Pre}}<td>{{.WaitAge}}</td>{{.Post}}{{with .Held}} <span class="held">{{.}}</span>{{end}}</td></tr>
{{end}}</tbody></table>
{{else}}<p>No open autopilot issue matches. Rows appear after a pass on an issue (a delivery or the sweep).</p>{{end}}
{{with .Pager}}{{template "pager" .}}{{end}}
{{template "foot" .}}{{end}}
{{define "pager"}}<nav class="pager">{{if .Prev}}<a href="{{.Prev}}">← previous</a> {{end}}<span>rows {{.From}}–{{.To}} of {{.Of}}</span>{{if .Next}} <a href="{{.Next}}">next →</a>{{end}}</nav>{{end}}
`

// rowTmpl is one issue's row of the list, cut in two around the age
// cell: the halves are rendered once per row version and cached
// (rowCache), the age is rendered each time, and so is the end of the
// tracker cell (a wait for the budget, which changes without the row).
const rowTmpl = `
{{define "row-pre"}}<tr id="{{.Key}}"><td><a href="{{.Link}}">#{{.Issue}}</a> {{.Title}} <a class="muted" href="{{.URL}}">↗</a></td>
<td>{{.Flow}}</td><td>{{if .StepName}}{{.StepName}}{{else}}{{.Step}}{{end}}</td><td><span class="s {{statusClass .Status}}">{{.Status}}</span></td>
{{if .Wait}}<td>{{.Wait.Kind}}: {{if .Wait.Link}}<a href="{{.Wait.Link}}">{{.Wait.What}}</a>{{else}}{{.Wait.What}}{{end}}</td><td>{{if .Wait.From}}{{joinAt .Wait.From}}; {{end}}<span class="muted">{{.Wait.Who}}</span></td>
{{else}}<td></td><td></td>{{end}}{{end}}
{{define "row-post"}}<td class="reason">{{.Stopped}}{{.Failed}}</td><td>{{with .TrackerWaiting}}{{len .}} waiting{{end}} <span class="muted">{{.TrackerNote}}</span>{{end}}
`

const issueTmpl = `
{{define "issue"}}{{template "head" .}}
{{with .Row}}<h1><a href="{{.URL}}">{{.Repo}}#{{.Issue}}</a> {{.Title}}</h1>
<dl><dt>installation</dt><dd>{{.Installation}}</dd><dt>flow</dt><dd>{{.Flow}}</dd>
<dt>step</dt><dd>{{.StepName}} <span class="muted">({{.Step}})</span></dd>
<dt>status</dt><dd><span class="s {{statusClass .Status}}">{{.Status}}</span></dd>
{{if .Wait}}<dt>waits for</dt><dd>{{.Wait.Kind}}: {{if .Wait.Link}}<a href="{{.Wait.Link}}">{{.Wait.What}}</a>{{else}}{{.Wait.What}}{{end}} — {{if .Wait.From}}{{joinAt .Wait.From}}; {{end}}{{.Wait.Who}}, for {{$.WaitAge}}</dd>{{end}}
{{if .Stopped}}<dt>stopped</dt><dd class="reason">{{.Stopped}}</dd>{{end}}
{{if .Failed}}<dt>failed</dt><dd class="reason">{{.Failed}}</dd>{{end}}
{{if $.Held}}<dt>background sync</dt><dd class="held">{{$.Held}}: the sweep and tracker syncs of this installation resume then; answers and commands go on</dd>{{end}}
{{if $.HeldUnread}}<dt>background sync</dt><dd class="muted">{{$.HeldUnread}}</dd>{{end}}
{{if .TrackerWaiting}}<dt>waiting for the tracker</dt><dd><ul>{{range .TrackerWaiting}}<li>{{.ID}} {{.Title}} — {{.Sync}} <span class="reason">{{.Error}}</span></li>{{end}}</ul>{{.TrackerNote}}</dd>{{end}}
<dt>state version</dt><dd>{{.Version}}, written {{.UpdatedAt.UTC.Format "2006-01-02 15:04 UTC"}}</dd></dl>
{{end}}
<h2>timeline</h2>
{{with .SVG}}{{if .Items}}<svg role="img" aria-label="timeline" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" xmlns="http://www.w3.org/2000/svg">
<line x1="{{.X0}}" y1="{{.Axis}}" x2="{{.X1}}" y2="{{.Axis}}" stroke="#8c959f" stroke-width="2"/>
{{range .Items}}<g><line x1="{{.X}}" y1="{{$.SVG.Axis}}" x2="{{.X}}" y2="{{.StemY}}" stroke="#d0d7de"/>
{{if .Link}}<a href="{{.Link}}">{{end}}<circle cx="{{.X}}" cy="{{$.SVG.Axis}}" r="7" fill="{{.Color}}"><title>{{.Title}}</title></circle>{{if .Link}}</a>{{end}}
<text x="{{.X}}" y="{{.LabelY}}" text-anchor="middle">{{.Short}}</text><text x="{{.X}}" y="{{.DateY}}" text-anchor="middle" fill="#656d76">{{.When}}</text></g>
{{end}}</svg>{{end}}{{end}}
<table><thead><tr><th>when</th><th>kind</th><th>what</th><th>detail</th></tr></thead><tbody>
{{range .Row.Timeline}}<tr><td>{{.At.UTC.Format "2006-01-02 15:04"}}</td><td>{{.Kind}}</td><td>{{if .Link}}<a href="{{.Link}}">{{.Label}}</a>{{else}}{{.Label}}{{end}}</td><td>{{.Detail}}</td></tr>
{{else}}<tr><td colspan="4">nothing recorded yet</td></tr>{{end}}</tbody></table>
{{template "foot" .}}{{end}}
`

const healthTmpl = `
{{define "health"}}{{template "head" .}}
<h1>service health <span class="muted">(this replica{{if .H.Shared}}; the queue is shared{{end}})</span></h1>
<table><tbody>{{range .H.Lines}}<tr><th>{{.Name}}</th><td>{{if .Value}}{{.Value}}{{else}}<span class="muted">not measured</span>{{end}}</td><td class="muted">{{.Note}}</td></tr>{{end}}</tbody></table>
<h2>API budget per installation</h2>
<table><thead><tr><th>installation</th><th>remaining</th><th>resets</th><th>background</th></tr></thead><tbody>
{{range .H.Budgets}}<tr><td>{{.Installation}}</td><td>{{.Remaining}}</td><td>{{if .Reset}}{{.Reset}}{{else}}<span class="muted">not measured</span>{{end}}</td><td>{{if .Waiting}}{{.Waiting}}{{else}}<span class="muted">runs</span>{{end}}</td></tr>
{{else}}<tr><td colspan="4" class="muted">not measured yet (no GitHub answer seen by this replica)</td></tr>{{end}}</tbody></table>
<h2>recent errors</h2>
<table><thead><tr><th>when</th><th>message</th><th>detail</th></tr></thead><tbody>
{{range .H.Errors}}<tr><td>{{.At.UTC.Format "15:04:05"}}</td><td>{{.Msg}}</td><td class="muted">{{.Detail}}</td></tr>
{{else}}<tr><td colspan="3" class="muted">{{if .H.ErrorsKept}}none since start{{else}}not measured{{end}}</td></tr>{{end}}</tbody></table>
{{template "foot" .}}{{end}}
`
