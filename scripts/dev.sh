#!/usr/bin/env bash
# Run the memory service locally, from nothing: PostgreSQL (installed if
# missing, private cluster in ./.data/postgres on 127.0.0.1:54329), the
# `mentor` database, migrations, a demo facilitator with two learners, a
# 24 h token printed with curl examples, then the server on $PORT (8080).
#
# Environment: PORT (default 8080); SUPABASE_JWT_SECRET (default: a dev
# secret generated once into ./.data/dev-jwt-secret, so tokens survive
# restarts); DEV_PG_PORT (default 54329). MENTOR_DEV_MODE is set to true.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

PG_DIR=$ROOT/.data/postgres
PG_PORT=${DEV_PG_PORT:-54329}
export PORT=${PORT:-8080}

# dev_jwt_secret: the secret of the dev tokens, kept across runs.
dev_jwt_secret() {
  local file=$ROOT/.data/dev-jwt-secret
  if [[ ! -s $file ]]; then
    log "generating a dev JWT secret in $file"
    mkdir -p "$(dirname "$file")"
    (
      umask 077 # the redirection must come after the umask
      if command -v openssl >/dev/null 2>&1; then
        openssl rand -hex 32 >"$file"
      else
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$file"
      fi
    )
  fi
  tr -d '\n' <"$file"
}

main() {
  ensure_go || exit 1
  pg_ensure_installed || die "could not install PostgreSQL"
  pg_start_private "$PG_DIR" "$PG_PORT" || die "could not start PostgreSQL"
  pg_create_db "$PG_PORT" mentor || die "could not create database mentor"
  DATABASE_URL=$(pg_url "$PG_PORT" mentor)
  export DATABASE_URL

  if [[ -z ${SUPABASE_JWT_SECRET:-} ]]; then
    SUPABASE_JWT_SECRET=$(dev_jwt_secret)
    export SUPABASE_JWT_SECRET
  fi

  # The web client at http://localhost:$PORT/ gets a "Sign in as the demo
  # facilitator" button (POST /api/dev/token). Local only: never set it on
  # a server others can reach.
  export MENTOR_DEV_MODE=true

  # One build serves the demo set-up and the server itself.
  log "go build -o bin/server ./cmd/server"
  go build -o bin/server ./cmd/server
  # Migrates, creates the demo facilitator dana@example.com with learners
  # Emma and Max unless they exist, and prints a 24 h token with examples.
  log "migrating $DATABASE_URL and creating the demo facilitator"
  ./bin/server demo

  log "serving on http://localhost:$PORT (PostgreSQL keeps running; stop it with:"
  log "  bash -c 'source scripts/lib/postgres.sh && pg_stop_private .data/postgres')"
  exec ./bin/server
}

main "$@"
