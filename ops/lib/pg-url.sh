# Sourced by the ops scripts. `pg_url_env URL` points libpq (psql, pg_dump, pg_restore) at URL
# through the environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE) and its password
# through a passfile readable by the owner only (PGPASSFILE), so no password is ever on a command
# line, where `ps` shows it to every user. `pg_url_cleanup` removes the passfile (call it on exit).
# The URL is handed over in the environment, never as an argument.
PG_URL_PASSFILE=""

pg_url_env() {
  local parsed
  parsed=$(PG_URL="$1" python3 - <<'PY'
import os, shlex, urllib.parse
u = urllib.parse.urlsplit(os.environ["PG_URL"])
q = dict(urllib.parse.parse_qsl(u.query))
values = {"PGHOST": u.hostname or "localhost", "PGPORT": str(u.port or 5432), "PGUSER": urllib.parse.unquote(u.username or ""),
          "PGDATABASE": urllib.parse.unquote(u.path.lstrip("/"))}
if "sslmode" in q:
    values["PGSSLMODE"] = q["sslmode"]
for key, value in values.items():
    print(f"export {key}={shlex.quote(value)}")
password = urllib.parse.unquote(u.password or "").replace("\\", "\\\\").replace(":", "\\:")
print(f"PG_URL_PASSWORD={shlex.quote(password)}")
PY
)
  eval "$parsed"
  if [ -n "$PG_URL_PASSWORD" ]; then
    PG_URL_PASSFILE=$(mktemp)
    chmod 600 "$PG_URL_PASSFILE"
    printf '*:*:*:*:%s\n' "$PG_URL_PASSWORD" > "$PG_URL_PASSFILE"
    export PGPASSFILE=$PG_URL_PASSFILE
  fi
  unset PG_URL_PASSWORD
}

pg_url_cleanup() {
  [ -n "$PG_URL_PASSFILE" ] && rm -f "$PG_URL_PASSFILE"
  return 0
}

# Whether URL carries a password (then it must not be given on a command line).
pg_url_has_password() {
  PG_URL="$1" python3 -c 'import os, sys, urllib.parse; sys.exit(0 if urllib.parse.urlsplit(os.environ["PG_URL"]).password else 1)'
}
