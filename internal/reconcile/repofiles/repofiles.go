// Package repofiles reads what reconcile needs from the repository's files
// through the forge: the configuration, the files that suggest a flow (and
// so a starting run's flow), and the task files of a Jira step.
package repofiles

import (
	"context"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Config is the repository configuration as read through the API.
type Config struct {
	Config *config.Config
	// Raw is the file's text ("" when there is none).
	Raw string
	// Keep: small enough to be carried in the state.
	Keep bool
}

// maxCachedConfig bounds the configuration copy kept in the state.
const maxCachedConfig = 16 << 10

// ReadConfig reads and parses the configuration file at path through the
// API; a missing file means the defaults.
func ReadConfig(ctx context.Context, f forge.Forge, path string) (*Config, error) {
	data, found, err := f.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var c *config.Config
	if !found {
		c, data = config.Default(), nil
	} else if c, err = config.Parse(data); err != nil {
		return nil, &ConfigError{Path: path, Err: err}
	}
	return &Config{Config: c, Raw: string(data), Keep: len(data) <= maxCachedConfig}, nil
}

// ConfigError is a broken repository configuration (exit code 2).
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ReadTaskFiles reads the markdown files of task directory dir, by path
// (nil: none, or no directory); the engine parses them (pass.Node).
func ReadTaskFiles(ctx context.Context, f forge.Forge, dir string) (map[string]string, error) {
	lister, ok := f.(interface {
		ListDir(ctx context.Context, dir string) ([]string, bool, error)
	})
	if !ok {
		return nil, nil
	}
	names, found, err := lister.ListDir(ctx, dir)
	if err != nil || !found {
		return nil, err
	}
	files := map[string]string{}
	for _, n := range names {
		if !strings.HasSuffix(n, ".md") {
			continue
		}
		p := strings.TrimSuffix(dir, "/") + "/" + n
		data, ok, err := f.ReadFile(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if ok {
			files[p] = string(data)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	return files, nil
}

// LabelFlow is the flow a flow label (autopilot/flow:<name>) among labels
// names, when it is a configured flow; "" otherwise (the engine picks:
// the default flow, or detection).
func LabelFlow(labels []string, cfg *config.Config) string {
	for _, l := range labels {
		if name, ok := strings.CutPrefix(l, "autopilot/flow:"); ok {
			if _, known := cfg.All[name]; known {
				return name
			}
		}
	}
	return ""
}

// ReadDir lists the names directly under directory dir of the repository
// ("": its top) for flow detection (pass.Node decides from them); nil when
// there is no such directory or the forge cannot list files.
func ReadDir(ctx context.Context, f forge.Forge, dir string) ([]string, error) {
	lister, ok := f.(interface {
		ListDir(ctx context.Context, dir string) ([]string, bool, error)
	})
	if !ok {
		return nil, nil
	}
	names, _, err := lister.ListDir(ctx, dir)
	return names, err
}

// Current returns the configuration a pass uses. It is read through the API
// when a run starts (fresh), once per sweep (the sweep passes what it read,
// sw), and whenever the state holds no copy; other events use the copy the
// state carries (one API call saved per event; a changed file takes effect
// at the next sweep or start). fixed, when set, is used as it is. Raw and
// Keep are set only for a copy read through the API.
func Current(ctx context.Context, f forge.Forge, path string, fixed *config.Config, sw *Config, read *state.State, fresh bool) (*Config, error) {
	if fixed != nil {
		return &Config{Config: fixed}, nil
	}
	if sw != nil {
		return sw, nil
	}
	if s := read; s != nil && s.ConfigRead && !fresh {
		c, err := config.Parse([]byte(s.ConfigYAML))
		if err == nil {
			return &Config{Config: c}, nil
		}
	}
	return ReadConfig(ctx, f, path)
}
