package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileClockMovesByTheFileAndKeepsTheLastGoodOffset: the clock is the
// wall clock plus the file's duration, re-read at every call; a file being
// rewritten (empty or garbled for a moment) keeps the last good offset
// rather than jumping back.
func TestFileClockMovesByTheFileAndKeepsTheLastGoodOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wall := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	write("25h\n")
	c, err := newFileClock(path, func() time.Time { return wall })
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		file string
		want time.Duration
	}{
		{"25h\n", 25 * time.Hour},
		{"97h", 97 * time.Hour},
		{"garbled", 97 * time.Hour},
		{"", 0},
		{"-1h", -time.Hour},
	}
	for _, s := range steps {
		write(s.file)
		if got := c.Now().Sub(wall); got != s.want {
			t.Errorf("file %q: offset %s, want %s", s.file, got, s.want)
		}
	}
}
