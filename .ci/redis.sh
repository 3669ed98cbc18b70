# shellcheck shell=bash
# start_redis starts a redis-server of this run's own, on a free TCP port of
# 127.0.0.1, and sets REDIS_PORT and REDIS_PID (the caller stops it with
# `kill "$REDIS_PID"`). Two runs on one machine never share a server: a
# port is taken only once the server answering there reports its own
# process id; a port another process holds makes the new server exit
# (bind error), and the next port is tried. redis-server cannot listen on
# port 0, and the tests' TCP proxy (internal/server) needs TCP, not a unix
# socket. CI_REDIS_PORTS, when set, is the list of ports to try (tests).
start_redis() {
  local log ports port pid
  log="$(mktemp -t ci-redis.XXXXXX)"
  if [ -n "${CI_REDIS_PORTS:-}" ]; then
    ports="$CI_REDIS_PORTS"
  else
    ports=""
    for _ in $(seq 1 20); do
      ports="$ports $((20000 + RANDOM % 40000))"
    done
  fi
  for port in $ports; do
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --logfile "$log" &
    pid=$!
    for _ in $(seq 1 50); do
      if serves "$port" "$pid"; then
        # shellcheck disable=SC2034 # set for the caller
        REDIS_PORT=$port
        # shellcheck disable=SC2034 # set for the caller
        REDIS_PID=$pid
        rm -f "$log"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break # exited: the port is taken
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "ci: redis-server did not start on any of the ports tried ($ports); its log:" >&2
  cat "$log" >&2
  rm -f "$log"
  return 1
}

# serves says whether the Redis answering on 127.0.0.1:$1 is process $2.
serves() {
  [[ "$(redis-cli -p "$1" info server 2>/dev/null | tr -d '\r')" == *$'\n'"process_id:$2"$'\n'* ]]
}
