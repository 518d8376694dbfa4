# Shared setup of the benchmarks (sourced): tools, a release build, a private PostgreSQL cluster
# with the schema migrated, a platform admin token, and the server on a free port.
#
# After `bench_setup`: ROOT WORK BIN PGBIN PGHOST PGPORT PGUSER OWNER_URL APP_URL TOKEN TOKEN_HASH.
# After `bench_serve`: SERVER_PID URL. Everything is removed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
THREADS=2
PLATFORM=00000000-0000-0000-0000-000000000000

bench_setup() {
  ops/install-deps
  if ! command -v wrk >/dev/null 2>&1 || ! command -v pgbench >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1; then
    echo "installing wrk and the PostgreSQL client tools …" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk postgresql-client >/dev/null
  fi
  PGBIN=$(dirname "$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl | tail -1)")

  echo "== building (release) …" >&2
  swift build -c release --product backoffice >/dev/null
  BIN=$ROOT/.build/release/backoffice

  WORK=$(mktemp -d /tmp/backoffice-bench-XXXXXX)
  chmod 755 "$WORK"
  AS=()
  if [ "$(id -u)" = 0 ]; then AS=(runuser -u postgres --); install -d -o postgres -g postgres -m 700 "$WORK/data"; else mkdir -m 700 "$WORK/data"; fi
  PGPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  HTTPPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  SERVER_PID=""
  trap bench_cleanup EXIT

  echo "== private cluster on port $PGPORT …" >&2
  "${AS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/data/server.log" -w -o "-p $PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200 -c shared_buffers=256MB" start >/dev/null
  export PGHOST=127.0.0.1 PGPORT PGUSER=postgres
  psql -qAt -d postgres -c "CREATE DATABASE bench" >/dev/null
  OWNER_URL="postgres://postgres@127.0.0.1:$PGPORT/bench?sslmode=disable"
  APP_URL="postgres://backoffice_app@127.0.0.1:$PGPORT/bench?sslmode=disable"
  BACKOFFICE_ADMIN_DATABASE_URL=$OWNER_URL "$BIN" db migrate >/dev/null
  TOKEN=$(BACKOFFICE_DATABASE_URL=$APP_URL "$BIN" admin bootstrap --email bench@healthtrack.example 2>/dev/null | sed -n 's/^token: //p')
  TOKEN_HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
}

bench_cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}

bench_serve() {
  "$BIN" serve --port "$HTTPPORT" --database-url "$APP_URL" > "$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
  URL=http://127.0.0.1:$HTTPPORT
}

# Loads `count` customers with ids md5('bench' || i) for i in [0, count).
bench_customers() {
  psql -qAt -d bench -c "INSERT INTO customers (id, email, display_name)
    SELECT md5('bench' || i)::uuid, 'user' || lpad(i::text, 6, '0') || '@example.com', 'User ' || i FROM generate_series(0, $1 - 1) i;
    ANALYZE;" >/dev/null
}

tps() { echo "$1" | awk '/^tps = /{print $3}' | head -1; }
