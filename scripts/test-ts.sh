#!/usr/bin/env bash
# The TypeScript client (clients/typescript) against the live service, and
# the Next.js example (examples/nextjs) type-checked against the client.
#
#   scripts/test-ts.sh
#
# Installs Node and npm from Debian when missing (Node 18 or newer is
# needed), runs `npm ci` in both folders, builds the client, then starts
# the service (`server`, built from ./cmd/server) on a fresh, migrated
# database with two facilitators signed up and a token minted for each by
# `server token`, and a second one on the same database whose model is the
# fake the counselor's tests start, and runs the client's tests with
# `node --test`. One of
# them regenerates the types from the served /api/openapi.json and fails
# unless they equal the committed src/schema.ts.
#
# Database: DATABASE_URL names a server to create the fresh database on
# (unset: the private cluster of scripts/test.sh, .data/test-postgres on
# 127.0.0.1:54330, started if needed). The database is dropped and the
# service stopped however the run ends. Under CI=true anything missing
# (Node, npm, PostgreSQL) fails the run; elsewhere it skips with a warning.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

TEST_PG_DIR=$ROOT/.data/test-postgres
TEST_PG_PORT=${TEST_PG_PORT:-54330}
CLIENT_DIR=clients/typescript
EXAMPLE_DIR=examples/nextjs
CI=${CI:-}

# missing WHAT: fails under CI=true, else skips the whole run.
missing() {
  if [[ $CI == true ]]; then
    die "CI=true and $1 (see above)"
  fi
  warn "$1; the TypeScript client's tests are skipped"
  exit 0
}

# ensure_node: Node 18 or newer with npm, from Debian when missing
# (bookworm's nodejs is 18).
ensure_node() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    log "Node or npm not found; installing Debian's nodejs and npm"
    apt_install nodejs npm || return 1
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]') || return 1
  if ((major < 18)); then
    err "Node $(node --version) is too old; the client needs 18 or newer"
    return 1
  fi
  log "Node $(node --version), npm $(npm --version)"
}

# free_port: a TCP port nothing listens on now on 127.0.0.1.
free_port() {
  local port _
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# State for cleanup, which runs however the script ends.
WORK=$(mktemp -d)
SERVER_PID=
CHAT_SERVER_PID=
ADMIN_URL=
FRESH_NAME=
STOP_CLUSTER=
cleanup() {
  local pid
  for pid in $SERVER_PID $CHAT_SERVER_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n $FRESH_NAME ]]; then
    psql -X -q -d "$ADMIN_URL" -c "drop database if exists $FRESH_NAME with (force)" || true
  fi
  if [[ -n $STOP_CLUSTER ]]; then
    pg_stop_private "$TEST_PG_DIR" || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

npm_install() {
  section "npm ci ($CLIENT_DIR, $EXAMPLE_DIR)"
  (cd "$CLIENT_DIR" && npm ci --no-audit --no-fund)
  # The example links the client (file:), whose build it type-checks against.
  (cd "$CLIENT_DIR" && npm run --silent build)
  # Type-checking needs no platform binaries (next's compiler, sharp).
  (cd "$EXAMPLE_DIR" && npm ci --no-audit --no-fund --omit=optional)
}

# database: a fresh database on ADMIN_URL's server, migrated, with two
# facilitators signed up (rows in auth.users, as Supabase Auth makes them).
database() {
  section "Database"
  if [[ -n ${DATABASE_URL:-} ]]; then
    ADMIN_URL=$DATABASE_URL
  else
    pg_ensure_installed || missing "PostgreSQL could not be installed"
    [[ $CI != true ]] || STOP_CLUSTER=1
    pg_start_private "$TEST_PG_DIR" "$TEST_PG_PORT" || missing "the private test cluster did not start"
    ADMIN_URL=$(pg_url "$TEST_PG_PORT" postgres)
  fi
  FRESH_NAME=mentor_ts_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  DB_URL=$(with_database "$ADMIN_URL" "$FRESH_NAME")
  psql -X -q -v ON_ERROR_STOP=1 -d "$ADMIN_URL" -c "create database $FRESH_NAME"
  DATABASE_URL=$DB_URL "$WORK/server" migrate >/dev/null
  FACILITATOR=$(cat /proc/sys/kernel/random/uuid)
  OTHER_FACILITATOR=$(cat /proc/sys/kernel/random/uuid)
  psql -X -q -v ON_ERROR_STOP=1 -d "$DB_URL" -v a="$FACILITATOR" -v b="$OTHER_FACILITATOR" <<'SQL'
insert into auth.users (id, email) values (:'a', 'ts-client@example.com'), (:'b', 'ts-other@example.com');
SQL
  log "fresh database $FRESH_NAME"
}

# serve NAME [ENV…]: the service on a free port, in dev mode (so on
# 127.0.0.1 only), with the offline summarizer, a quota of 3 new learners a
# day that a test uses up, and ENV besides; waits until /healthz answers.
# Sets SERVED_URL and SERVED_PID.
serve() {
  local name=$1 port log=$WORK/$1.log deadline=$((SECONDS + 30))
  shift
  section "server ($name)"
  port=$(free_port) || die "no free port found"
  env DATABASE_URL="$DB_URL" PORT="$port" SUPABASE_JWT_SECRET="$SECRET" MENTOR_DEV_MODE=true OPENAI_API_KEY= \
    MENTOR_LIMIT_LEARNERS_PER_DAY=3 "$@" \
    "$WORK/server" >"$log" 2>&1 &
  SERVED_PID=$!
  SERVED_URL=http://127.0.0.1:$port
  until node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "$SERVED_URL/healthz"; do
    if ! kill -0 "$SERVED_PID" 2>/dev/null || ((SECONDS > deadline)); then
      err "the server did not answer on $SERVED_URL; its log:"
      cat "$log" >&2
      exit 1
    fi
    sleep 0.2
  done
  log "serving on $SERVED_URL (log: $log)"
}

main() {
  section "Node"
  ensure_node || missing "Node 18+ and npm could not be installed"
  ensure_go || missing "Go is not installed"
  command -v psql >/dev/null 2>&1 || pg_ensure_installed || missing "psql could not be installed"

  npm_install
  log "go build -o $WORK/server ./cmd/server"
  go build -o "$WORK/server" ./cmd/server
  database
  SECRET=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  serve memory
  SERVER_PID=$SERVED_PID MENTOR_URL=$SERVED_URL
  # The counselor's tests need a model: a second server on the same
  # database asks the fake one the tests start on MODEL_PORT. The first
  # has none, so posts to it neither call a model nor queue extraction.
  MODEL_PORT=$(free_port) || die "no free port found"
  serve chat OPENAI_API_KEY=test-key OPENAI_BASE_URL="http://127.0.0.1:$MODEL_PORT/v1"
  CHAT_SERVER_PID=$SERVED_PID MENTOR_CHAT_URL=$SERVED_URL

  section "node --test ($CLIENT_DIR)"
  local token other_token
  token=$(SUPABASE_JWT_SECRET=$SECRET "$WORK/server" token -sub "$FACILITATOR" -ttl 15m)
  other_token=$(SUPABASE_JWT_SECRET=$SECRET "$WORK/server" token -sub "$OTHER_FACILITATOR" -ttl 15m)
  (cd "$CLIENT_DIR" && MENTOR_URL=$MENTOR_URL MENTOR_CHAT_URL=$MENTOR_CHAT_URL MENTOR_MODEL_PORT=$MODEL_PORT \
    MENTOR_TOKEN=$token MENTOR_OTHER_TOKEN=$other_token npm test --silent)

  section "tsc --noEmit ($EXAMPLE_DIR)"
  (cd "$EXAMPLE_DIR" && npx --no-install tsc --noEmit -p .)
  section "OK"
}

main "$@"
