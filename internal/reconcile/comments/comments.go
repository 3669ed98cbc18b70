// Package comments builds the engine's view of the comments a pass reads:
// each reply parsed once per pass, what the engine's edit rule reads; and
// which comments could act and are not yet handled.
package comments

import (
	"sort"
	"strconv"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// Parser parses each comment's body once per pass (the engine is given the
// parsed form; an edit read later is parsed again). The zero value is ready.
type Parser struct {
	m map[int64]parsed
}

// parsed is a comment's body and its reply as parsed.
type parsed struct {
	body string
	r    grammar.Result
}

// Parse returns c's reply, parsed once per body.
func (p *Parser) Parse(c forge.Comment) grammar.Result {
	if got, ok := p.m[c.ID]; ok && got.body == c.Body {
		return got.r
	}
	r := engine.Parse(c.Body)
	if p.m == nil {
		p.m = map[int64]parsed{}
	}
	p.m[c.ID] = parsed{c.Body, r}
	return r
}

// Sources is what building a comment's view asks of the pass.
type Sources struct {
	Issue  int
	Config *config.Config
	// AuthorEdit is the trigger's proof of an edit by a comment's author.
	AuthorEdit *forge.Comment
	Parse      func(forge.Comment) grammar.Result
	// Replied reports whether the bot already replied to a comment.
	Replied func(id int64) bool
}

// Event builds the engine's view of a comment: who wrote it, whether
// the edit rule holds it, its reply as parsed. The author's permission
// and the tasks a report declares are the engine's to read (pass.Node
// asks for them when the comment needs them).
func Event(src Sources, st *state.State, c forge.Comment) events.Comment {
	ev := events.Comment{ID: c.ID, Author: c.Author.Login, Bot: c.Author.IsBot(), Agent: src.Config.IsAgent(c.Author.Login),
		Body: c.Body, At: c.CreatedAt, URL: c.URL, OnPR: 0}
	if c.IssueNumber != src.Issue {
		ev.OnPR = c.IssueNumber
	}
	ev.EditUnproven = engine.EditUnproven(Written(c), writtenPtr(src.AuthorEdit))
	res := src.Parse(c)
	ev.Reply, ev.Replied = &res, src.Replied(c.ID)
	return ev
}

// Written is what c shows the engine's edit rule (engine.EditUnproven).
func Written(c forge.Comment) engine.Written {
	return engine.Written{ID: c.ID, Author: c.Author.Login, Body: c.Body, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func writtenPtr(c *forge.Comment) *engine.Written {
	if c == nil {
		return nil
	}
	w := Written(*c)
	return &w
}

// ReplyMarker is the hidden marker of the bot's reply to comment id.
func ReplyMarker(id int64) string { return marker.Build(marker.Reply, strconv.FormatInt(id, 10)) }

// InOrder sorts comments in creation order (ids break ties).
func InOrder(cs []forge.Comment) {
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].CreatedAt.Equal(cs[j].CreatedAt) {
			return cs[i].CreatedAt.Before(cs[j].CreatedAt)
		}
		return cs[i].ID < cs[j].ID
	})
}

// Pending reports an unhandled comment among cs that could act
// (engine.AnyPending).
func Pending(cs []forge.Comment, st *state.State, parse func(forge.Comment) grammar.Result) bool {
	return engine.AnyPending(st, Read(cs, nil, nil, parse))
}

// Unseen reports a comment that could act, not among those seen at the
// load, not the bot's (trusted) and not handled in st (engine.AnyUnseen).
func Unseen(cs []forge.Comment, seen map[int64]bool, trusted func(forge.Comment) bool, st *state.State, parse func(forge.Comment) grammar.Result) bool {
	return engine.AnyUnseen(st, Read(cs, seen, trusted, parse))
}

// Read is what the engine's pending rules read of cs: whether each could
// act, was seen at the load (seen) and is the bot's (trusted; nil: none).
func Read(cs []forge.Comment, seen map[int64]bool, trusted func(forge.Comment) bool, parse func(forge.Comment) grammar.Result) []engine.ReadComment {
	out := make([]engine.ReadComment, 0, len(cs))
	for _, c := range cs {
		out = append(out, engine.ReadComment{ID: c.ID, Acts: parse(c).Acts(), SeenAtLoad: seen[c.ID], Bot: trusted != nil && trusted(c)})
	}
	return out
}
