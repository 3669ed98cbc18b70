package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestDeduperRemembersForTheTTLThenForgets(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewDeduper(72*time.Hour, func() time.Time { return now })
	ctx := context.Background()
	if seen, _ := d.Seen(ctx, "x"); seen {
		t.Fatal("new id reported seen")
	}
	if seen, _ := d.Seen(ctx, "x"); !seen {
		t.Fatal("repeated id not reported seen")
	}
	now = now.Add(72*time.Hour - time.Second)
	if seen, _ := d.Seen(ctx, "x"); !seen {
		t.Fatal("id forgotten before the TTL")
	}
	now = now.Add(9*time.Hour + time.Second) // past TTL + TTL/8
	if seen, _ := d.Seen(ctx, "x"); seen {
		t.Fatal("id remembered past 9/8 of the TTL")
	}
	if d.Len() != 1 {
		t.Fatalf("Len = %d after expiry, want 1 (the id just recorded again)", d.Len())
	}
}

func TestDeduperBoundsMemory(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewDeduper(72*time.Hour, func() time.Time { return now })
	d.maxIDs = 10
	ctx := context.Background()
	for i := range 40 {
		d.Seen(ctx, fmt.Sprint(i))
		now = now.Add(3 * time.Hour) // a new generation every third id
	}
	if d.Len() > 10 {
		t.Fatalf("Len = %d, want at most the bound of 10", d.Len())
	}
	if seen, _ := d.Seen(ctx, "39"); !seen {
		t.Fatal("the newest id was dropped")
	}
}
