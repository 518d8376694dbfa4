# Shared setup of the benchmarks (sourced): tools, a release build, a private PostgreSQL cluster
# with the schema migrated, a platform admin token, and the server on a free port.
#
# After `bench_setup`: ROOT WORK BIN PGBIN PGHOST PGPORT PGUSER OWNER_URL APP_URL TOKEN TOKEN_HASH.
# BENCH_REUSE_BUILD=1 uses the binaries already in .build/release instead of building them.
# After `bench_serve`: SERVER_PID URL. Everything is removed on exit.
set -euo pipefail
# -h or --help: the benchmark's own leading comment, and nothing run.
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
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

  if [ -n "${BENCH_REUSE_BUILD:-}" ] && [ -x "$ROOT/.build/release/backoffice" ] && [ -x "$ROOT/.build/release/bench-floor" ]; then
    echo "== reusing the release build in .build/release (BENCH_REUSE_BUILD)" >&2
  else
    echo "== building (release) …" >&2
    swift build -c release --product backoffice >/dev/null
    swift build -c release --product bench-floor >/dev/null
    swift build -c release --product screen-bench >/dev/null
  fi
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
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/data/server.log" -w -o "-p $PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200 -c shared_buffers=256MB ${BENCH_PG_OPTIONS:-}" start >/dev/null
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
  [ -n "${SINK_PID:-}" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null || true
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}

# The server, its mail going to a real SMTP server on loopback (ops/mail-sink.py: STARTTLS, AUTH;
# MAIL_SINK_URL), which the outbox row measures; BENCH_SERVE_ARGS are added to `serve`'s options.
bench_serve() {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/smtp-key.pem" -out "$WORK/smtp-cert.pem" -days 1 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost 2>/dev/null
  "$ROOT/.build/browser-venv/bin/python" "$ROOT/ops/mail-sink.py" --dir "$WORK/mail" --cert "$WORK/smtp-cert.pem" --key "$WORK/smtp-key.pem" \
    > "$WORK/sink.log" 2>&1 &
  SINK_PID=$!
  for _ in $(seq 100); do grep -q '^ready ' "$WORK/sink.log" 2>/dev/null && break; sleep 0.1; done
  SMTP_PORT=$(sed -n 's/^ready //p' "$WORK/sink.log")
  MAIL_SINK_URL="smtp://backoffice:mail-sink-password@localhost:$SMTP_PORT?ca=$WORK/smtp-cert.pem"
  BACKOFFICE_PAYMENTS=simulated BACKOFFICE_SMTP_URL=$MAIL_SINK_URL BACKOFFICE_PUBLIC_URL=http://127.0.0.1:$HTTPPORT \
    BACKOFFICE_SECOND_FACTOR_KEY=$(head -c 32 /dev/urandom | base64) "$BIN" serve --port "$HTTPPORT" --database-url "$APP_URL" ${BENCH_SERVE_ARGS:-} > "$WORK/serve.log" 2>&1 &
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

# The statement that opens the read session of a hot list (Database.readSession with generic
# plans: AuthenticateSession in Sources/BackofficePlatform/Database), as the server sends it.
BENCH_READ_SESSION="SELECT a.token_id, a.operator_id, a.tenant_id, a.role, a.scopes, a.allowed_addresses FROM set_config('plan_cache_mode', 'force_generic_plan', false) p,
  set_config('enable_sort', 'off', false) s, authenticate_session(decode(:tokhash, 'hex')) a;"

tps() { echo "$1" | awk '/^tps = /{print $3}' | head -1; }

# ---- Rows: one operation measured against its ceiling, shared by every benchmark (ops/bench/run
# prints them all in one table). Each appends its line to $WORK/results.

# wrk at CONN connections for DURATION seconds on PATH (GET with the bench token unless a script
# and token are given); prints wrk's summary and a "BENCH p50_ms= p99_ms= non2xx=" line.
bench_wrk() { # conn path [lua] [token]
  BENCH_TOKEN=${4:-$TOKEN} BENCH_PATH=$2 BENCH_IDS=${BENCH_IDS:-} BENCH_THREADS=$THREADS \
    wrk -t"$THREADS" -c"$1" -d"${DURATION}s" --latency -s "${3:-$ROOT/ops/bench/get.lua}" "$URL$2"
}

# pgbench at CONN connections for DURATION seconds on SCRIPT, with :tokhash (default the bench
# token's), :clients and :counter defined, as the server's own role (backoffice_app: row-level
# security applies to the ceiling as it does to the server); extra arguments go to pgbench.
bench_pg() { # conn script [tokhash] [pgbench args…]
  local clients=$1 script=$2 hash=${3:-$TOKEN_HASH}
  shift 3 2>/dev/null || shift $#
  pgbench -n -M prepared -U backoffice_app -c "$clients" -j "$THREADS" -D tokhash="$hash" -D clients="$clients" -D counter=0 -T "$DURATION" "$@" \
    -f "$script" bench 2>"$WORK/pgbench.err" || { echo "pgbench failed on $script:" >&2; grep -m3 -B1 -A3 "ERROR" "$WORK/pgbench.err" >&2; return 1; }
}

# The chosen stack's floor for a read, at CONN connections: a bare Hummingbird + PostgresNIO server
# (Sources/BenchFloor: no contract, policy, logging or limits) answering PATH with SCRIPT's
# statements — the ceiling's own SQL — measured by wrk like the service; prints wrk's output.
bench_floor() { # conn path script [token]
  local port pid out
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$ROOT/.build/release/bench-floor" --port "$port" --database-url "$APP_URL" --path "${2%%\?*}" --sql "$3" > "$WORK/floor.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  out=$(URL=http://127.0.0.1:$port bench_wrk "$1" "$2" "$ROOT/ops/bench/get.lua" "${4:-$TOKEN}")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$out"
}

# One result line: the service's throughput and latency beside the ceiling's throughput and the ratio.
# A signed-in console session of a platform operator of ROLE (made for the bench), as a Cookie header.
bench_console_cookie() { # role
  local operator secret hash
  operator=$(psql -qAt -d bench -v ON_ERROR_STOP=1 -c "SET app.tenant_id = '$PLATFORM'" -c "INSERT INTO operators (tenant_id, id, email, role, kind)
    VALUES ('$PLATFORM', gen_random_uuid(), 'bench-$1@healthtrack.example', '$1', 'person') ON CONFLICT DO NOTHING RETURNING id" | tail -1)
  secret=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  hash=$(printf %s "$secret" | sha256sum | cut -d' ' -f1)
  psql -qAt -d bench -v ON_ERROR_STOP=1 -c "INSERT INTO console_sessions (id, secret_hash, tenant_id, operator_id, created_at, last_seen_at, stage)
    VALUES (gen_random_uuid(), '\\x$hash', '$PLATFORM', '$operator', now(), now(), 'signed_in')" >/dev/null
  echo "console_session=$secret"
}

# The statements of a shop's home (30 days against the 30 before) for pgbench: its database time.
bench_shop_home_sql() { # file
  cat > "$1" <<SQL
BEGIN;
SELECT token_id, operator_id, tenant_id, role, scopes, allowed_addresses FROM authenticate_request(decode(:tokhash, 'hex'));
WITH sold AS (SELECT day, sum(orders) AS orders, sum(total_cents) AS cents FROM shop_daily_orders
    WHERE tenant_id = '$TENANT0' AND day BETWEEN current_date - 59 AND current_date AND order_status_sold(status) GROUP BY day),
  refunded AS (SELECT day, sum(refunds) AS refunds, sum(refunded_cents) AS cents FROM shop_daily_refunds
    WHERE tenant_id = '$TENANT0' AND day BETWEEN current_date - 59 AND current_date GROUP BY day)
  SELECT day, s.orders, s.cents, r.refunds, r.cents FROM sold s FULL JOIN refunded r USING (day);
SELECT day, status, sum(orders) FROM shop_daily_orders WHERE tenant_id = '$TENANT0'
  AND day BETWEEN current_date - 29 AND current_date GROUP BY day, status;
WITH top AS (SELECT tenant_id, good_id, sum(units) AS units FROM shop_daily_goods WHERE tenant_id = '$TENANT0'
    AND day BETWEEN current_date - 29 AND current_date GROUP BY 1, 2 ORDER BY units DESC LIMIT 10)
  SELECT t.good_id, g.name, (SELECT array_agg(coalesce(d.units, 0) ORDER BY s.day)
    FROM generate_series(current_date - 29, current_date, interval '1 day') s (day)
    LEFT JOIN shop_daily_goods d ON d.tenant_id = t.tenant_id AND d.day = s.day::date AND d.good_id = t.good_id)
  FROM top t JOIN goods g ON g.tenant_id = t.tenant_id AND g.id = t.good_id;
SELECT id, sku, name, stock FROM goods WHERE tenant_id = '$TENANT0' AND status = 'active' AND stock < 5 ORDER BY stock, sku LIMIT 10;
SELECT status, sum(orders) FROM shop_daily_orders WHERE tenant_id = '$TENANT0' GROUP BY status;
COMMIT;
SQL
}

bench_report() { # name conn wrk-output ceiling-output [ceiling-label]
  local rps p50 p99 non2xx ceiling
  rps=$(echo "$3" | awk '/Requests\/sec/{print $2}')
  p50=$(echo "$3" | sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p')
  p99=$(echo "$3" | sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p')
  non2xx=$(echo "$3" | sed -n 's/.*non2xx=\([0-9]*\).*/\1/p')
  ceiling=$(tps "$4")
  [ -n "$ceiling" ] || ceiling=$(echo "$4" | awk '/Requests\/sec/{print $2}')
  printf "%-16s %3s conn  server %7.0f req/s  p50 %7.2f ms  p99 %7.2f ms  non-2xx %-3s | %-8s %7.0f /s  ratio %.2f\n" \
    "$1" "$2" "$rps" "$p50" "$p99" "$non2xx" "${5:-pgbench}" "$ceiling" "$(python3 -c "print($rps / $ceiling)")" | tee -a "$WORK/results" >&2
}

# CPU seconds (user + system) used so far by a process and its children (given the postmaster's pid:
# all of PostgreSQL, its backends included): read before and after a phase, the difference is what
# the phase cost that side. Children that ended before the second reading are not counted.
bench_cpu() { # pid
  python3 - "$1" <<'PY'
import os, sys
root, total = sys.argv[1], 0
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        if pid == root or fields[1] == root:  # fields[1]: the parent's pid
            total += int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
    except (FileNotFoundError, ProcessLookupError):
        pass
print(total / os.sysconf("SC_CLK_TCK"))
PY
}

# The postmaster's pid (for bench_cpu).
bench_postmaster() { head -1 "$WORK/data/postmaster.pid"; }

# The server's resident memory, sampled every half second from bench_rss_start to bench_rss_stop
# (which prints the largest sample in MB).
bench_rss_start() {
  (while kill -0 "$SERVER_PID" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$SERVER_PID/status"; sleep 0.5; done > "$WORK/rss") &
  RSS_PID=$!
}
bench_rss_stop() {
  kill "$RSS_PID" 2>/dev/null || true
  sort -n "$WORK/rss" | tail -1 | awk '{printf "%.0f", $1 / 1024}'
}

# The account list's SQL for one request (a read session: authenticated in its first statement,
# then the page; Sources/Backoffice/Accounts), and the page alone.
bench_list_sql() { # request-file page-file
  local columns="c.id, c.email, c.display_name, c.status, c.subscription, c.renews_at, c.failed_logins, c.created_at, c.updated_at, c.deleted_at,
  c.version, l.id, l.cause, l.reason, l.failed_attempts, l.locked_by, l.locked_at, l.until, l.lifted_at, l.lifted_by, l.lift_reason"
  local page="SELECT $columns FROM (
    SELECT * FROM customers c
    WHERE c.status = ANY('{active,locked}'::text[])
      AND (c.email, c.id) > (coalesce((SELECT a.email FROM customers a WHERE a.id = '$PLATFORM'), ''), '$PLATFORM'::uuid)
    ORDER BY c.email, c.id LIMIT 51) c
  LEFT JOIN LATERAL (SELECT * FROM account_locks l WHERE l.customer_id = c.id AND l.lifted_at IS NULL) l ON true
  ORDER BY c.email, c.id;"
  printf '%s\n%s\n' "$BENCH_READ_SESSION" "$page" > "$1"
  echo "$page" > "$2"
}

# The server's SQL for one audited lock, on a different account every time (BEGIN,
# authenticate_request, read for update, change, audit_append — which picks the lane as the server
# does — COMMIT), over `count` customers loaded by bench_customers.
bench_lock_sql() { # file count
  cat > "$1" <<SQL
\\set counter :counter + 1
\\set n (:client_id + :counter * :clients) % $2
BEGIN;
SELECT token_id, operator_id, tenant_id, role, scopes, allowed_addresses FROM authenticate_request(decode(:tokhash, 'hex'));
SELECT c.id, c.email, c.display_name, c.status, c.subscription, c.renews_at, c.failed_logins, c.created_at, c.updated_at, c.deleted_at, c.version,
  l.id, l.cause, l.reason, l.failed_attempts, l.locked_by, l.locked_at, l.until, l.lifted_at, l.lifted_by, l.lift_reason
  FROM customers c LEFT JOIN account_locks l ON l.customer_id = c.id AND l.lifted_at IS NULL WHERE c.id = md5('bench' || :n)::uuid FOR UPDATE OF c;
WITH opened AS (
  INSERT INTO account_locks (id, customer_id, cause, reason, failed_attempts, locked_by, until)
  SELECT gen_random_uuid(), md5('bench' || :n)::uuid, 'manual', 'benchmark', NULL, NULL, NULL RETURNING id
), lifted AS (
  UPDATE account_locks SET lifted_at = now() WHERE customer_id = md5('bench' || :n)::uuid AND lifted_at IS NULL AND false RETURNING id
)
UPDATE customers SET status = 'locked', failed_logins = 0, version = version + 1, updated_at = now(), deleted_at = NULL
  WHERE id = md5('bench' || :n)::uuid RETURNING version, now();
SELECT audit_append('$PLATFORM', NULL, 'platform_admin', 'accounts.lock', 'customer',
  md5('bench' || :n)::uuid::text, 'bench-request', '127.0.0.1', 'benchmark', '{"status":"active","version":1}'::jsonb,
  '{"status":"locked","version":2}'::jsonb, 'policy-digest', NULL);
COMMIT;
SQL
}

# Every lock lifted (between lock runs: each run locks distinct active accounts), then a
# checkpoint, so both sides of a row start right after one (the loaders write gigabytes of WAL, and
# an automatic checkpoint could fall inside either side's run; pgbench's lock rate has swung between
# 700 and 1,900 tps from run to run).
bench_unlock_all() {
  psql -qAt -d bench -c "UPDATE account_locks SET lifted_at = now() WHERE lifted_at IS NULL; UPDATE customers SET status = 'active' WHERE status = 'locked';" >/dev/null
  psql -qAt -d bench -c "VACUUM ANALYZE" >/dev/null
  psql -qAt -d bench -c "CHECKPOINT" >/dev/null
}

# Loads `partners` retail partners (tenants with a partner admin token each, 100 goods each) and
# `orders` orders per partner, with one line each, for customers of bench_customers (`customers`).
# Sets PARTNER_TOKEN, PARTNER_HASH and TENANT0 (the first partner's).
bench_partners() { # partners orders customers
  local secrets=$WORK/partner-tokens
  : > "$secrets"
  for _ in $(seq 1 "$1"); do echo "bo_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')" >> "$secrets"; done
  psql -qAt -d bench -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET app.tenant_id = '$PLATFORM';
CREATE TEMP TABLE secrets (n int, secret text);
\\copy secrets (secret) FROM '$secrets'
UPDATE secrets s SET n = r.n FROM (SELECT ctid, row_number() OVER () - 1 AS n FROM secrets) r WHERE s.ctid = r.ctid;
INSERT INTO tenants (id, slug, name) SELECT md5('tenant' || n)::uuid, 'partner-' || n, 'Partner ' || n FROM secrets;
INSERT INTO operators (tenant_id, id, email, role, kind)
  SELECT md5('tenant' || n)::uuid, md5('admin' || n)::uuid, 'admin@partner-' || n || '.example', 'partner_admin', 'person' FROM secrets;
INSERT INTO tokens (tenant_id, id, operator_id, name, secret_hash, role, expires_at)
  SELECT md5('tenant' || n)::uuid, md5('token' || n)::uuid, md5('admin' || n)::uuid, 'bench', sha256(convert_to(secret, 'UTF8')), 'partner_admin',
         now() + interval '1 day' FROM secrets;
INSERT INTO goods (tenant_id, id, sku, name, description, category, price_cents, price_fitpoints, stock, status, created_at, updated_at)
  SELECT md5('tenant' || p)::uuid, md5('good' || (p * 100 + g))::uuid, 'SKU-' || g, 'Good ' || g, '', 'gear', 1000, NULL, 1000000000, 'active', now(), now()
  FROM generate_series(0, $1 - 1) p, generate_series(0, 99) g;
-- Loaded in bulk, consistent by construction: the line-count triggers (one check per order at
-- commit) are skipped, as a replication apply would.
SET session_replication_role = replica;
INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name, shipping_address, carrier, tracking_number,
                    line_count, created_at, updated_at)
  SELECT md5('tenant' || p)::uuid, md5('order' || p || '-' || i)::uuid, md5('bench' || (i % $3))::uuid,
         (ARRAY['paid', 'accepted', 'shipped', 'delivered', 'cancelled'])[1 + i % 5], 1000, 0, 'Bench Buyer',
         '{"line1": "1 Main St", "city": "Austin", "region": "TX", "postal_code": "73301", "country": "US"}', 'UPS', 'T' || i, 1,
         now() - make_interval(secs => i * 17 + p), now()
  FROM generate_series(0, $1 - 1) p, generate_series(1, $2) i;
INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price)
  SELECT o.tenant_id, o.id, 1, g.id, g.sku, g.name, 1, 'usd', 1000
  FROM orders o JOIN goods g ON g.tenant_id = o.tenant_id AND g.sku = 'SKU-' || abs(hashtext(o.id::text)) % 100;
SQL
  # The shops' daily figures, which the skipped trigger keeps: rebuilt from the orders, as `reports rebuild` does.
  psql -qAt -d bench -v ON_ERROR_STOP=1 -c "SET app.tenant_id = '$PLATFORM'" -c "SELECT count(*) FROM shop_rollups_rebuild(NULL)" >/dev/null
  # The load's dirty pages are written now, not by the checkpointer during the measured runs.
  psql -qAt -d bench -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  PARTNER_TOKEN=$(head -1 "$secrets")
  PARTNER_HASH=$(printf %s "$PARTNER_TOKEN" | sha256sum | cut -d' ' -f1)
  TENANT0=$(psql -qAt -d bench -c "SELECT md5('tenant' || 0)::uuid")
}

# A partner's first orders page (GET /v1/orders?limit=50): the read session's SQL (Sources/Backoffice/Orders).
bench_orders_sql() { # file
  cat > "$1" <<SQL
$BENCH_READ_SESSION
SELECT o.id, o.tenant_id, o.customer_id, o.status, o.total_cents, o.total_fitpoints, o.shipping_name, o.shipping_address->>'line1',
  o.shipping_address->>'line2', o.shipping_address->>'city', o.shipping_address->>'region', o.shipping_address->>'postal_code',
  o.shipping_address->>'country', o.carrier, o.tracking_number, o.status_reason, o.line_count, o.created_at, o.updated_at, o.version FROM orders o
WHERE o.tenant_id = '$TENANT0' AND (o.created_at, o.id) < ('4001-01-01T00:00:00Z'::timestamptz, '$PLATFORM'::uuid)
ORDER BY o.created_at DESC, o.id DESC LIMIT 51;
SQL
}

# Appends `count` audit events through audit_append (as the server does), a third of them on the
# partners' chains (bench_partners' first `partners`), the rest on the platform's lanes: 1,000 per
# statement, each statement its own transaction. (In one transaction, or one DO block committing
# as it goes, every chain head's dead versions pile up behind the open snapshot and each append
# walks them: 100,000 events took 9 minutes, a million would take hours.)
bench_audit() { # count partners
  python3 - "$1" "$2" "$PLATFORM" > "$WORK/audit.sql" <<'PY'
import sys
count, partners, platform = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
print(f"SET app.tenant_id = '{platform}';")
for start in range(0, count, 1000):
    end = min(start + 999, count - 1)
    print(f"SELECT count(audit_append(CASE WHEN i % 3 = 0 THEN md5('tenant' || (i % {partners}))::uuid ELSE '{platform}'::uuid END, NULL,"
          f" 'platform_admin', 'bench.event', 'customer', md5('bench' || i)::text, 'bench-' || i, '127.0.0.1', NULL, NULL,"
          f" jsonb_build_object('n', i), 'policy-digest', NULL)) FROM generate_series({start}, {end}) i;")
PY
  psql -qAt -d bench -v ON_ERROR_STOP=1 -f "$WORK/audit.sql" >/dev/null
}

# A console session for the first partner's admin, as a browser holds it (CONSOLE_COOKIE), and a
# password set through the product's own invitation (CONSOLE_EMAIL, CONSOLE_PASSWORD) for the
# sign-in benchmark.
bench_console_session() {
  local admin secret hash link
  admin=$(psql -qAt -d bench -c "SELECT md5('admin' || 0)::uuid")
  secret=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  hash=$(printf %s "$secret" | sha256sum | cut -d' ' -f1)
  psql -qAt -d bench -v ON_ERROR_STOP=1 -c "INSERT INTO console_sessions (id, secret_hash, tenant_id, operator_id, created_at, last_seen_at, stage)
    VALUES (gen_random_uuid(), '\\x$hash', '$TENANT0', '$admin', now(), now(), 'signed_in')" >/dev/null
  CONSOLE_COOKIE="console_session=$secret"
  CONSOLE_EMAIL="admin@partner-0.example"
  CONSOLE_PASSWORD="bench $(head -c 12 /dev/urandom | base64)"
  link=$(BACKOFFICE_URL=$URL BACKOFFICE_TOKEN=$TOKEN "$BIN" operators invite "$admin" --show-link --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["link_path"])')
  curl -s -o /dev/null -w '%{http_code}' "$URL/console/invitation" --data-urlencode "key=${link#*key=}" \
    --data-urlencode "password=$CONSOLE_PASSWORD" --data-urlencode "confirm_password=$CONSOLE_PASSWORD" | grep -q 303 \
    || { echo "bench: could not set the console password through the invitation" >&2; return 1; }
}

# The app's content: `articles` published articles (one version each, six categories, twenty tags)
# and `recommendations` published recommendations over five audience rules (any customer, active,
# lapsed, none, active or lapsed); the loaded customers' subscriptions spread over the three states.
bench_content() { # articles recommendations
  local author
  author=$(psql -qAt -d bench -c "SELECT id FROM operators ORDER BY created_at LIMIT 1")
  psql -qAt -d bench -c "
    INSERT INTO articles (id, slug, author_id, state, version, live_version, created_at, updated_at, updated_by,
                          first_published_at, live_at)
      SELECT md5('article' || i)::uuid, 'article-' || i, '$author', 'published', 1, 1, now(), now(), '$author',
        now() - i * interval '1 minute', now() FROM generate_series(0, $1 - 1) i;
    INSERT INTO article_versions (article_id, version, title, summary, category, body, html, tags, words,
                                  reading_minutes, written_by, written_at)
      SELECT md5('article' || i)::uuid, 1, 'Article ' || i, 'What article ' || i || ' is about, in a sentence.',
        (ARRAY['nutrition','exercise','recovery','mindset','sleep','wellbeing'])[1 + i % 6], 'Body ' || i,
        '<p>Body ' || i || '</p>', ARRAY['tag' || (i % 20)], 2, 1, '$author', now() FROM generate_series(0, $1 - 1) i;
    INSERT INTO recommendations (id, kind, title, body, html, subscriptions, status, published_at, created_by,
                                 created_at, updated_by, updated_at)
      SELECT md5('recommendation' || i)::uuid, (ARRAY['exercise','nutrition'])[1 + i % 2], 'Recommendation ' || i,
        'Do **this** ' || i, '<p>Do <strong>this</strong> ' || i || '</p>',
        (ARRAY['{}', '{active}', '{lapsed}', '{none}', '{active,lapsed}']::text[][])[1 + i % 5]::text[],
        'published', now() - i * interval '1 minute', '$author', now(), '$author', now()
      FROM generate_series(0, $2 - 1) i;
    UPDATE customers SET subscription = (ARRAY['none','active','lapsed'])[1 + abs(hashtext(id::text)) % 3];
    ANALYZE;" >/dev/null
}

# The server's SQL for the app's reads (a read session: the statement that authenticates and
# makes the connection act for the token's principal with PostgreSQL's default plans, then the read),
# for pgbench and the floor alike: the first page of published articles, one customer's recommendations.
bench_content_sql() { # directory customer
  local published="SELECT a.id, a.slug, a.live_version, v.title, v.summary, v.category, v.cover_url, v.byline, v.tags,
  v.reading_minutes, a.first_published_at, a.live_at
FROM articles a JOIN article_versions v ON v.article_id = a.id AND v.version = a.live_version
WHERE a.live_version IS NOT NULL AND a.state <> 'archived' AND (NULL::text IS NULL) AND (NULL::text IS NULL)
  AND (NULL::timestamptz IS NULL)
ORDER BY a.first_published_at DESC, a.id DESC LIMIT 51;"
  local recommended="SELECT r.id, r.kind, r.title, r.body, r.html, r.published_at, r.valid_until, r.version
FROM customers c LEFT JOIN LATERAL (
  SELECT * FROM recommendations r
  WHERE r.status = 'published' AND (r.valid_from IS NULL OR r.valid_from <= now())
    AND (r.valid_until IS NULL OR r.valid_until > now())
    AND (cardinality(r.subscriptions) = 0 OR c.subscription = ANY(r.subscriptions))
  ORDER BY r.published_at DESC, r.id DESC LIMIT 50) r ON true
WHERE c.id = '$2';"
  local session="SELECT a.token_id, a.operator_id, a.tenant_id, a.role, a.scopes, a.allowed_addresses FROM set_config('plan_cache_mode', 'auto', false) p,
  set_config('enable_sort', 'on', false) s, authenticate_session(decode(:tokhash, 'hex')) a;"
  printf '%s\n%s\n' "$session" "$published" > "$1/published.sql"
  printf '%s\n%s\n' "$session" "$recommended" > "$1/recommended.sql"
}

# Health profiles for the first `count` bench customers, each with `versions` versions of history
# (ids md5('bench' || i)), their ids in $WORK/health-ids.
bench_health() { # count versions
  psql -qAt -d bench -c "
    INSERT INTO health_profile_history (customer_id, version, synced_at, height_cm, weight_hg, birth_year, sex,
                                        weight_goal, daily_calorie_goal, activity_level)
      SELECT md5('bench' || i)::uuid, v, now() - (($2 - v) * interval '7 days'), 150 + i % 40, 600 + (i + v) % 300,
        1960 + i % 45, (ARRAY['female','male','other','not_said'])[1 + i % 4], 'keep', 2000, 'moderate'
      FROM generate_series(0, $1 - 1) i, generate_series(1, $2) v;
    INSERT INTO health_profiles (customer_id, version, synced_at, salt, height_cm, weight_hg, birth_year, sex, weight_goal,
                                 daily_calorie_goal, activity_level)
      SELECT customer_id, version, synced_at, uuid_send(gen_random_uuid()), height_cm, weight_hg, birth_year, sex,
        weight_goal, daily_calorie_goal, activity_level
      FROM health_profile_history WHERE version = $2;
    ANALYZE;" >/dev/null
  psql -qAt -d bench -c "SELECT md5('bench' || i)::uuid FROM generate_series(0, $1 - 1) i" > "$WORK/health-ids"
}

# The server's SQL for a profile's read (the read session, then the access event committed on its own,
# then health_profile_read for it) and its sync (one transaction: authenticate, the sync,
# its audit event), on distinct customers as the wrk script walks them.
bench_health_sql() { # directory count
  cat > "$1/health-read.sql" <<SQL
\\set counter :counter + 1
\\set n (:client_id + :counter * :clients) % $2
SELECT a.token_id, a.operator_id, a.tenant_id, a.role, a.scopes, a.allowed_addresses FROM authenticate_session(decode(:tokhash, 'hex')) a;
SELECT health_access_append(md5('bench' || :n)::uuid, NULL, 'support_request', 'api', 'bench-request', NULL, NULL) AS access \\gset
SELECT version, synced_at, height_cm, weight_hg, birth_year, sex, weight_goal, target_weight_hg, target_date,
  daily_calorie_goal, activity_level, history, access_id FROM health_profile_read(:access, 366);
SQL
  cat > "$1/health-sync.sql" <<SQL
\\set counter :counter + 1
\\set n (:client_id + :counter * :clients) % $2
\\set w 600 + :counter % 400
BEGIN;
SELECT token_id, operator_id, tenant_id, role, scopes, allowed_addresses FROM authenticate_request(decode(:tokhash, 'hex'));
SELECT version, digest, changed FROM health_profile_sync(md5('bench' || :n)::uuid, now(), 170::smallint, :w,
  1985::smallint, 'female', 'keep', NULL, NULL, 2000, 'moderate');
SELECT audit_append('$PLATFORM', NULL, 'platform_admin', 'health_profiles.sync', 'customer',
  md5('bench' || :n)::uuid::text, 'bench-request', '127.0.0.1', NULL, NULL,
  '{"changed":["weight_kg"],"digest":"0000000000000000000000000000000000000000000000000000000000000000","flags":[],"version":2}'::jsonb,
  'policy-digest', NULL);
COMMIT;
SQL
}
