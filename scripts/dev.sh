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

FACILITATOR_ID=11111111-1111-4111-8111-111111111111
EMMA_ID=22222222-2222-4222-8222-222222222201
MAX_ID=22222222-2222-4222-8222-222222222202

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

# seed_demo: one facilitator (dana@example.com) with learners Emma and Max.
# Fixed ids and ON CONFLICT make it safe to run at every start.
seed_demo() {
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<SQL
INSERT INTO auth.users (id, email)
VALUES ('$FACILITATOR_ID', 'dana@example.com')
ON CONFLICT DO NOTHING;
INSERT INTO public.learners (id, facilitator_id, name)
VALUES ('$EMMA_ID', '$FACILITATOR_ID', 'Emma'),
       ('$MAX_ID', '$FACILITATOR_ID', 'Max')
ON CONFLICT DO NOTHING;
SQL
}

print_usage_examples() {
  local token=$1 url="http://localhost:$PORT/api/conversation-memory"
  cat <<EOF

Demo facilitator dana@example.com ($FACILITATOR_ID), learners Emma ($EMMA_ID) and Max ($MAX_ID).
Token (24 h):

export TOKEN='$token'

Store two turns about Emma:

curl -sS -X POST '$url' \\
  -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
  -d '{"learner_id":"$EMMA_ID","conversation_turns":[{"role":"user","content":"Emma got stuck on fractions again today."},{"role":"assistant","content":"Try cutting a pizza into halves, then quarters, and let her name the pieces."}]}'

Read Emma's conversation memory:

curl -sS '$url?learner_id=$EMMA_ID' -H "Authorization: Bearer \$TOKEN"

EOF
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

  # One build serves migrate, token and the server itself.
  log "go build -o bin/server ./cmd/server"
  go build -o bin/server ./cmd/server
  log "migrating $DATABASE_URL"
  ./bin/server migrate
  log "seeding the demo facilitator and learners"
  seed_demo

  local token
  token=$(./bin/server token --sub "$FACILITATOR_ID" --ttl 24h)
  print_usage_examples "$token"

  log "serving on http://localhost:$PORT (PostgreSQL keeps running; stop it with:"
  log "  bash -c 'source scripts/lib/postgres.sh && pg_stop_private .data/postgres')"
  exec ./bin/server
}

main "$@"
