package servertest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandCalls reads how often the Redis at url ran each command (INFO
// commandstats; a script's own calls are counted too), by command name.
func CommandCalls(tb testing.TB, url string) map[string]int64 {
	tb.Helper()
	return commandStat(tb, url, "calls")
}

// CommandTime reads the time the Redis at url spent running each command
// (INFO commandstats "usec": a script's time includes its own calls'), by
// command name, in microseconds.
func CommandTime(tb testing.TB, url string) map[string]int64 {
	tb.Helper()
	return commandStat(tb, url, "usec")
}

// commandStat reads one field of INFO commandstats per command.
func commandStat(tb testing.TB, url, field string) map[string]int64 {
	tb.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int64{}
	for line := range strings.Lines(info) {
		// cmdstat_xadd:calls=5000,usec=12000,usec_per_call=2.40,...
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			if k, n, _ := strings.Cut(kv, "="); k == field {
				if v, err := strconv.ParseInt(n, 10, 64); err == nil {
					out[name] = v
				}
			}
		}
	}
	return out
}
