package codec

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// FuzzParse feeds arbitrary bodies to Parse: it must never panic, return a
// state only with a nil error or ErrEdited, and any state it accepts must
// render to a body it accepts again, unchanged.
func FuzzParse(f *testing.F) {
	f.Add(mustRenderF(f, statetest.Sample(), key), true)
	f.Add(mustRenderF(f, statetest.Sample(), nil), false)
	g := gen{rand.New(rand.NewSource(10))}
	for i := 0; i < 4; i++ {
		s := g.state(g.n(5))
		s.Repo, s.Issue = "octo-org/hello-world", 12
		f.Add(mustRenderF(f, s, nil), false)
	}
	f.Add(state.Marker+"\n"+dataPrefix+"e30="+marker.Suffix, false)
	// A gzipped envelope (payload "z:"), so the inflate path is explored.
	f.Add(state.Marker+"\n\n"+dataPrefix+gzipPrefix+"H4sIAAAAAAACA6tWKlOyMtRRKi5JLElVsqpWKk7OSM1NBIrV6ihllOYm5ilZKSnVAgBFIEeRJwAAAA=="+marker.Suffix, false)
	f.Add("", false)
	// Comments written in schema 1 (before the tracker fields were renamed).
	for _, name := range []string{"jira-signed", "subissues", "local"} {
		body, err := os.ReadFile(filepath.Join("testdata", "v1", name+".comment"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(body), name == "jira-signed")
	}

	f.Fuzz(func(t *testing.T, body string, keyed bool) {
		want := Want{Repo: "octo-org/hello-world", Issue: 12}
		if keyed {
			want.Key = key
		}
		s, err := Parse(body, want)
		if s == nil {
			if err == nil {
				t.Fatal("Parse returned neither a state nor an error")
			}
			return
		}
		if err != nil && !errors.Is(err, ErrEdited) {
			t.Fatalf("Parse returned a state with error %v", err)
		}
		before := *s
		again, err := Render(s, View{}, want.Key)
		if err != nil {
			t.Fatalf("accepted state does not render: %v", err)
		}
		got, err := Parse(again, want)
		if err != nil {
			t.Fatalf("re-rendered state is refused: %v", err)
		}
		before.Sig, got.Sig = "", ""
		utc(reflect.ValueOf(&before))
		utc(reflect.ValueOf(got))
		if !reflect.DeepEqual(&before, got) {
			t.Fatalf("re-rendered state differs:\nbefore %+v\nafter  %+v", before, *got)
		}
	})
}

func mustRenderF(f *testing.F, s *state.State, k []byte) string {
	body, err := Render(s, greenfieldView(), k)
	if err != nil {
		f.Fatal(err)
	}
	return body
}
