#!/usr/bin/env bash
# The database test suite: supabase/tests/*.sql, in pgTAP, run by pg_prove.
# Signed-in users (role authenticated, as Supabase's Data API runs them),
# the anon key and the service's own role attack every table in public;
# each file runs in one transaction and rolls it back.
#
#   scripts/test-db.sh [--migrated] [pg_prove options] [files]
#
# By default DATABASE_URL names a server to work on (unset: the private
# cluster of scripts/test.sh, .data/test-postgres on 127.0.0.1:54330,
# started if needed): a fresh database is created there, migrated with the
# service's own `server migrate`, tested and dropped.
#
# --migrated: DATABASE_URL is the database to test, migrated already, e.g.
# a Supabase project's (its direct or session-pooler connection string;
# the password best in PGPASSWORD). Nothing is created, migrated or
# dropped.
#
# pg_prove is installed when missing (Debian), and so is pgTAP for a server
# on this machine. Options and files go to pg_prove; without files it runs
# supabase/tests, as `supabase test db` does.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/pgtap.sh
source scripts/lib/pgtap.sh

TEST_PG_DIR=$ROOT/.data/test-postgres
TEST_PG_PORT=${TEST_PG_PORT:-54330}
TESTS_DIR=supabase/tests

# prove URL ARGS...: the suite, or the files among ARGS.
prove() {
  local url=$1 arg
  shift
  for arg in "$@"; do
    if [[ -e $arg ]]; then
      pgtap_prove "$url" --ext .pg --ext .sql -r "$@"
      return
    fi
  done
  pgtap_prove "$url" --ext .pg --ext .sql -r "$@" "$TESTS_DIR"
}

test_migrated() {
  [[ -n ${DATABASE_URL:-} ]] || die "--migrated tests the database at DATABASE_URL, which is not set"
  pgtap_available "$DATABASE_URL" ||
    die "the database at DATABASE_URL offers no pgtap extension (Supabase's always does): install pgTAP where its server runs"
  section "pgTAP: $TESTS_DIR on the database at DATABASE_URL, as it is"
  prove "$DATABASE_URL" "$@"
}

# The fresh database, dropped however the run ends.
FRESH_ADMIN=
FRESH_NAME=
# Under CI=true a private cluster this script started is stopped as it
# ends, as scripts/test.sh does, so that it holds no port afterwards.
STOP_CLUSTER=
drop_fresh() {
  if [[ -n $FRESH_NAME ]]; then
    psql -X -q -d "$FRESH_ADMIN" -c "drop database if exists $FRESH_NAME with (force)" || true
  fi
  if [[ -n $STOP_CLUSTER ]]; then
    pg_stop_private "$TEST_PG_DIR" || true
  fi
}

test_fresh() {
  local db
  ensure_go || exit 1
  if [[ -n ${DATABASE_URL:-} ]]; then
    FRESH_ADMIN=$DATABASE_URL
  else
    pg_ensure_installed || die "no PostgreSQL to test on"
    if [[ ${CI:-} == true ]]; then
      STOP_CLUSTER=1
      trap drop_fresh EXIT
    fi
    pg_start_private "$TEST_PG_DIR" "$TEST_PG_PORT" || die "the private test cluster did not start"
    FRESH_ADMIN=$(pg_url "$TEST_PG_PORT" postgres)
  fi
  pgtap_ensure_extension "$FRESH_ADMIN" || die "pgTAP is needed on the database server"

  FRESH_NAME=mentor_pgtap_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  db=$(with_database "$FRESH_ADMIN" "$FRESH_NAME")
  section "pgTAP: $TESTS_DIR on a fresh database, $FRESH_NAME"
  trap drop_fresh EXIT
  psql -X -q -v ON_ERROR_STOP=1 -d "$FRESH_ADMIN" -c "create database $FRESH_NAME"
  DATABASE_URL=$db go run ./cmd/server migrate >&2
  prove "$db" "$@"
}

main() {
  pgtap_ensure_prove || die "pg_prove is needed to run $TESTS_DIR"
  if [[ ${1:-} == --migrated ]]; then
    shift
    test_migrated "$@"
  else
    test_fresh "$@"
  fi
}

main "$@"
