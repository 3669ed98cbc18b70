package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
)

// lockerContract checks what every Locker promises; the Redis test reuses it.
func lockerContract(t *testing.T, a, b Locker) {
	ctx := context.Background()
	la, err := a.Lock(ctx, "o/r#1")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "o/r#1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock of a held key: err = %v, want it to wait until ctx ends", err)
	}
	other, err := b.Lock(ctx, "o/r#2")
	if err != nil {
		t.Fatalf("Lock of another key blocked: %v", err)
	}
	if err := la.Renew(ctx); err != nil {
		t.Fatalf("owner Renew: %v", err)
	}
	got := make(chan job.Lease, 1)
	go func() {
		l, err := b.Lock(ctx, "o/r#1")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(20 * time.Millisecond)
	if err := la.Release(ctx); err != nil {
		t.Fatalf("owner Release: %v", err)
	}
	var lb job.Lease
	select {
	case lb = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lease after release")
	}
	if lb.Token <= la.Token || other.Token <= la.Token {
		t.Fatalf("fencing tokens %d then %d, %d: want later leases to carry larger tokens", la.Token, lb.Token, other.Token)
	}
	if err := la.Release(ctx); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("stale Release: err = %v, want ErrLeaseLost", err)
	}
	if err := la.Renew(ctx); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("stale Renew: err = %v, want ErrLeaseLost", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := a.Lock(short2, "o/r#1"); err == nil {
		t.Fatal("stale Release freed the new holder's lease")
	}
	_ = lb.Release(ctx)
	_ = other.Release(ctx)
}

func TestMemoryLockerExclusiveFencedOwnerOnly(t *testing.T) {
	m := memstore.NewLocker()
	lockerContract(t, m, m)
}
