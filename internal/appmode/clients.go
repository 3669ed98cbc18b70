package appmode

import (
	"strings"
	"sync"

	gh "github.com/autopilot-dev/autopilot/internal/github"
)

// clientKey names one repository of one installation.
type clientKey struct {
	installation int64
	repo         string // lower-cased "owner/name"
}

// forgeCache keeps one adapter per installation and repository, so its ETag
// cache, label cache and mutation spacing outlive a job (the installation's
// token is cached below it, by ghinstallation). At most max entries are
// kept; the least recently used goes first.
type forgeCache struct {
	max   int
	build func(installation int64, repo string) (*gh.Client, error)

	mu      sync.Mutex
	tick    uint64
	entries map[clientKey]*cached
}

type cached struct {
	client *gh.Client
	used   uint64
}

func newForgeCache(max int, build func(int64, string) (*gh.Client, error)) *forgeCache {
	return &forgeCache{max: max, build: build, entries: make(map[clientKey]*cached)}
}

// get returns the cached adapter, building it on first use.
func (fc *forgeCache) get(installation int64, repo string) (*gh.Client, error) {
	k := clientKey{installation, strings.ToLower(repo)}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.tick++
	if e, ok := fc.entries[k]; ok {
		e.used = fc.tick
		return e.client, nil
	}
	c, err := fc.build(installation, repo)
	if err != nil {
		return nil, err
	}
	if len(fc.entries) >= fc.max {
		fc.evictOldest()
	}
	fc.entries[k] = &cached{client: c, used: fc.tick}
	return c, nil
}

// evictOldest drops the least recently used entry. Called with mu held.
func (fc *forgeCache) evictOldest() {
	var oldest clientKey
	first := true
	for k, e := range fc.entries {
		if first || e.used < fc.entries[oldest].used {
			oldest, first = k, false
		}
	}
	delete(fc.entries, oldest)
}

// forget drops every entry of an installation.
func (fc *forgeCache) forget(installation int64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for k := range fc.entries {
		if k.installation == installation {
			delete(fc.entries, k)
		}
	}
}

// len is the number of cached adapters.
func (fc *forgeCache) len() int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return len(fc.entries)
}
