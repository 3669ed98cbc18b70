#!/usr/bin/env bash
# Two CI runs on one machine start their Redis at the same time, both
# offered the same port first: each must get a server of its own (the
# second on the next port), answering as that process.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/redis.sh
. .ci/redis.sh

out="$(mktemp -d)"
pids=()
cleanup() {
  for f in "$out"/*.started; do
    [ -e "$f" ] || continue
    read -r _ pid <"$f"
    kill "$pid" 2>/dev/null || true
  done
  rm -rf "$out"
}
trap cleanup EXIT

first=$((20000 + RANDOM % 30000))
second=$((first + 1 + RANDOM % 1000))
for run in a b; do
  (
    CI_REDIS_PORTS="$first $second" start_redis
    echo "$REDIS_PORT $REDIS_PID" >"$out/$run.started"
  ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do
  wait "$p" || { echo "redis_test: a start-up failed"; exit 1; }
done

read -r port_a pid_a <"$out/a.started"
read -r port_b pid_b <"$out/b.started"
if [ "$port_a" = "$port_b" ]; then
  echo "redis_test: both runs on port $port_a"
  exit 1
fi
for pair in "$port_a $pid_a" "$port_b $pid_b"; do
  read -r port pid <<<"$pair"
  if ! serves "$port" "$pid"; then
    echo "redis_test: port $port is not served by process $pid"
    exit 1
  fi
done
echo "redis_test: ok (ports $port_a and $port_b)"
