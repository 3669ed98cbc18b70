package engine

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

var stateKey = []byte("k")

// stateBody renders a signed state comment of the sample state at version v
// whose watermark is since.
func stateBody(t *testing.T, v int64, since time.Time) string {
	t.Helper()
	s := statetest.Sample()
	s.Version, s.Since = v, since
	body, err := codec.Render(s, codec.View{}, stateKey)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// edited is body with its human part changed (the signed block intact).
func edited(body string) string {
	first, rest, _ := strings.Cut(body, "\n")
	return first + "\nedited by hand\n" + rest
}

func wantSample() codec.Want {
	s := statetest.Sample()
	return codec.Want{Repo: s.Repo, Issue: s.Issue, Key: stateKey}
}

// TestWatermarkOfNewestTrustedState: the watermark is the Since of the
// newest state among the bot's state comments (an edited one counts, a
// person's or a broken one does not).
func TestWatermarkOfNewestTrustedState(t *testing.T) {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	v3, v5 := stateBody(t, 3, at(3)), stateBody(t, 5, at(5))
	for _, tc := range []struct {
		name string
		cs   []BotComment
		want time.Time
	}{
		{"none", nil, time.Time{}},
		{"newest wins", []BotComment{{ID: 1, Trusted: true, Body: v5}, {ID: 2, Trusted: true, Body: v3}}, at(5)},
		{"a person's copy does not count", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Body: v5}}, at(3)},
		{"an edited one counts", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Trusted: true, Body: edited(v5)}}, at(5)},
		{"a broken one does not", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Trusted: true, Body: strings.Replace(v5, "autopilot:data ", "autopilot:data x", 1)}}, at(3)},
		{"not a state comment", []BotComment{{ID: 1, Trusted: true, Body: "<!-- autopilot:reply 4 -->\nhi"}}, time.Time{}},
	} {
		if got := StateWatermark(tc.cs, wantSample()); !got.Equal(tc.want) {
			t.Errorf("%s: StateWatermark = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStateMovedTable pins why a state write is refused as moved since
// the load: another trusted state comment is newer, the state comment is
// at another version, or it no longer verifies (unless restoring).
func TestStateMovedTable(t *testing.T) {
	v3, v4 := stateBody(t, 3, t0), stateBody(t, 4, t0)
	for _, tc := range []struct {
		name      string
		cs        []BotComment
		restoring bool
		want      string
	}{
		{"unchanged", []BotComment{{ID: 7, Trusted: true, Body: v3}}, false, ""},
		{"at another version", []BotComment{{ID: 7, Trusted: true, Body: v4}}, false, "it is at v4, this pass read v3"},
		{"another state comment is newer", []BotComment{{ID: 7, Trusted: true, Body: v3}, {ID: 9, Trusted: true, Body: v4}}, false, "another state comment 9 is at v4, this pass read v3"},
		{"a person's newer copy", []BotComment{{ID: 7, Trusted: true, Body: v3}, {ID: 9, Body: v4}}, false, ""},
		{"edited: still the state", []BotComment{{ID: 7, Trusted: true, Body: edited(v3)}}, false, ""},
		{"broken", []BotComment{{ID: 7, Trusted: true, Body: "<!-- autopilot:state -->\ngone"}}, false, "it no longer verifies ("},
		{"broken while restoring", []BotComment{{ID: 7, Trusted: true, Body: "<!-- autopilot:state -->\ngone"}}, true, ""},
	} {
		got := StateMoved(tc.cs, wantSample(), 7, 3, tc.restoring)
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: StateMoved = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFirstByMarkerTable pins which comment stands for each marker: the
// lowest id among the bot's, and for the state marker only a state that
// verifies (or was edited) and is at least as new as the one read.
func TestFirstByMarkerTable(t *testing.T) {
	v2, v3 := stateBody(t, 2, t0), stateBody(t, 3, t0)
	read := &state.State{Version: 3}
	cs := []BotComment{
		{ID: 20, Trusted: true, Body: "<!-- autopilot:reply 4 -->\nhi"},
		{ID: 10, Trusted: true, Body: "<!-- autopilot:reply 4 -->\nagain"},
		{ID: 5, Body: "<!-- autopilot:reply 5 -->\na person's"},
		{ID: 30, Trusted: true, Body: "no marker"},
		{ID: 3, Trusted: true, Body: v2},
		{ID: 8, Trusted: true, Body: edited(v3)},
		{ID: 9, Trusted: true, Body: v3},
	}
	want := map[string]int64{"<!-- autopilot:reply 4 -->": 10, state.Marker: 8}
	if got := FirstByMarker(cs, wantSample(), read); !maps.Equal(got, want) {
		t.Errorf("FirstByMarker = %v, want %v", got, want)
	}
	if got := FirstByMarker(cs[4:], wantSample(), nil); len(got) != 0 {
		t.Errorf("FirstByMarker without a state read = %v, want none", got)
	}
}

// TestReadStatesTable pins which state a load takes from the bot's state
// comments: the newest that verifies; an edited one's signed block as
// restorable (the newest such), with the edit described; a refused one
// described when nothing else was; anything not the bot's state comment
// is ignored.
func TestReadStatesTable(t *testing.T) {
	v3, v4, v5 := stateBody(t, 3, t0), stateBody(t, 4, t0), stateBody(t, 5, t0)
	broken := "<!-- autopilot:state -->\ngone"
	for _, tc := range []struct {
		name     string
		cs       []BotComment
		version  int64
		comment  int64
		restore  int64
		tampered string
		refused  int
	}{
		{"none", nil, 0, 0, 0, "", 0},
		{"newest verified", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Trusted: true, Body: v5}, {ID: 3, Trusted: true, Body: v4}}, 5, 2, 0, "", 0},
		{"a person's state comment is ignored", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Body: v5}}, 3, 1, 0, "", 0},
		{"edited", []BotComment{{ID: 1, Trusted: true, Body: v3}, {ID: 2, Trusted: true, Body: edited(v4)}}, 3, 2, 4, "comment 2: ", 0},
		{"broken", []BotComment{{ID: 1, Trusted: true, Body: broken}, {ID: 2, Trusted: true, Body: broken}}, 0, 0, 0, "comment 1: ", 2},
		{"broken beside a good one", []BotComment{{ID: 1, Trusted: true, Body: broken}, {ID: 2, Trusted: true, Body: v3}}, 3, 2, 0, "comment 1: ", 1},
	} {
		got := ReadStates(tc.cs, wantSample())
		var v, r int64
		if got.State != nil {
			v = got.State.Version
		}
		if got.Restorable != nil {
			r = got.Restorable.Version
		}
		if v != tc.version || got.StateComment != tc.comment || r != tc.restore || !strings.HasPrefix(got.Tampered, tc.tampered) || (tc.tampered == "") != (got.Tampered == "") || len(got.Refused) != tc.refused {
			t.Errorf("%s: ReadStates = v%d comment %d restorable v%d tampered %q refused %d; want v%d, %d, v%d, %q…, %d",
				tc.name, v, got.StateComment, r, got.Tampered, len(got.Refused), tc.version, tc.comment, tc.restore, tc.tampered, tc.refused)
		}
	}
}
