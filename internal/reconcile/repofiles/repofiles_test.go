package repofiles

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

const (
	testRepo = "acme/widgets"
	bot      = "github-actions[bot]"
)

// noDir is a Forge without ListDir (detection falls back to greenfield).
type noDir struct{ forge.Forge }

// failDir is a Forge whose ListDir fails.
type failDir struct{ *forge.Sandbox }

func (failDir) ListDir(context.Context, string) ([]string, bool, error) {
	return nil, false, &forge.TransientError{Status: 502, Err: errors.New("bad gateway")}
}

// TestReadDir: the listing flow detection reads (pass.Node decides from
// it): the names under a directory, none on a forge that cannot list,
// and a listing's error as it is.
func TestReadDir(t *testing.T) {
	sb := forge.NewSandbox(testRepo, forge.User{Login: bot, Type: "Bot"}, nil)
	for _, f := range []string{"README.md", "_docs/_repo-config.yaml", "cmd/main.go"} {
		sb.SetFile(f, []byte("x"))
	}
	got, err := ReadDir(context.Background(), sb, "")
	if err != nil || !reflect.DeepEqual(got, []string{"README.md", "_docs", "cmd"}) {
		t.Errorf("top = %v, %v", got, err)
	}
	if got, err := ReadDir(context.Background(), sb, "_docs"); err != nil || !reflect.DeepEqual(got, []string{"_repo-config.yaml"}) {
		t.Errorf("_docs = %v, %v", got, err)
	}
	if got, err := ReadDir(context.Background(), noDir{sb}, ""); err != nil || got != nil {
		t.Errorf("a forge that cannot list: %v, %v", got, err)
	}
	var te *forge.TransientError
	if _, err := ReadDir(context.Background(), failDir{forge.NewSandbox(testRepo, forge.User{}, nil)}, ""); !errors.As(err, &te) {
		t.Errorf("err = %v, want the transient error", err)
	}
}
