package redisq

import (
	"context"
	"testing"
)

// TestReaderReadsInChunksUnderABacklog: while a replica holds entries
// enough to keep its workers busy, the reader waits until a worker's worth
// of room is free instead of reading one entry per finished job (each read
// is a write to Redis).
func TestReaderReadsInChunksUnderABacklog(t *testing.T) {
	const workers = 4
	q := NewReplica(nil, ReplicaOptions{Workers: workers})
	for range Held(workers) {
		q.tokens <- struct{}{}
	}
	<-q.tokens // one job finished
	got := make(chan int, 1)
	go func() {
		n, _ := q.takeTokens(context.Background())
		got <- n
	}()
	for range workers - 1 { // three more finish
		<-q.tokens
	}
	if n := <-got; n != workers {
		t.Fatalf("reader read room for %d entries with %d held, want %d (a worker's worth)", n, Held(workers)-workers, workers)
	}
}

// TestReaderReadsAtOnceWithoutABacklog: with fewer entries held than keep
// the workers busy, the reader reads as soon as there is room.
func TestReaderReadsAtOnceWithoutABacklog(t *testing.T) {
	const workers = 4
	q := NewReplica(nil, ReplicaOptions{Workers: workers})
	for range workers {
		q.tokens <- struct{}{}
	}
	if n, ok := q.takeTokens(context.Background()); !ok || n != streamBatch {
		t.Fatalf("takeTokens = %d, %v with %d held; want %d at once", n, ok, workers, streamBatch)
	}
}
