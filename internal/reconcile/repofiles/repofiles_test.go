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

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"empty repository", nil, []string{"greenfield"}},
		{"only meta files", []string{"README.md", "LICENSE", ".gitignore", ".github/workflows/ci.yml", "LICENSE-APACHE"}, []string{"greenfield"}},
		{"source code", []string{"README.md", "go.mod", "cmd/main.go"}, []string{"existing-code"}},
		{"docs without a repo config", []string{"README.md", "_docs/00_problem.md"}, []string{"existing-code"}},
		{"a meta repository", []string{"README.md", "_docs/_repo-config.yaml"}, []string{"meta-repo"}},
		{"submodules", []string{".gitmodules", "README.md"}, []string{"meta-repo"}},
		{"submodules and source", []string{".gitmodules", "src/x.go"}, []string{"meta-repo", "existing-code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := forge.NewSandbox(testRepo, forge.User{Login: bot, Type: "Bot"}, nil)
			for _, f := range tt.files {
				sb.SetFile(f, []byte("x"))
			}
			got, err := Detect(context.Background(), sb)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("detect = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	t.Run("a forge that cannot list directories", func(t *testing.T) {
		sb := forge.NewSandbox(testRepo, forge.User{}, nil)
		sb.SetFile("main.go", []byte("x"))
		if got, err := Detect(context.Background(), noDir{sb}); err != nil || !reflect.DeepEqual(got, []string{"greenfield"}) {
			t.Errorf("detect = %v, %v", got, err)
		}
	})
	t.Run("a listing error is returned", func(t *testing.T) {
		var te *forge.TransientError
		if _, err := Detect(context.Background(), failDir{forge.NewSandbox(testRepo, forge.User{}, nil)}); !errors.As(err, &te) {
			t.Errorf("err = %v, want the transient error", err)
		}
	})
}
