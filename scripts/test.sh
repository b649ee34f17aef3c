#!/usr/bin/env bash
# Check and test everything: gofmt, go vet, go test -race (the browser
# end-to-end test included: Chromium is installed if missing), the database
# test suite (supabase/tests, pgTAP, by scripts/test-db.sh), the TypeScript
# client against the live server (scripts/test-ts.sh), then each fuzz
# target for FUZZ_TIME (default 8s).
#
# Database: with DATABASE_URL unset, a private cluster is started in
# ./.data/test-postgres on 127.0.0.1:54330 (PostgreSQL installed if missing)
# and DATABASE_URL points at its `postgres` database; tests create their own
# databases from it. A streaming hot standby of it is made afresh
# (pg_basebackup) in ./.data/test-standby on 127.0.0.1:54332, for the tests
# of the read replica (TEST_DATABASE_REPLICA_URL), and stopped and removed
# at exit however the run ends. The primary keeps running for faster
# reruns, except under CI=true, where it is stopped at exit too. Under
# CI=true a missing database or standby is an error; elsewhere the tests
# that need them are left to skip. With DATABASE_URL set, nothing is
# started: TEST_DATABASE_REPLICA_URL may name its standby.
#
# Arguments go to `go test`: flags only (`-run TestX -v`) test ./...;
# a package first (`./memory -run TestX`) tests just what is given, and
# fuzzes nothing and runs no database test suite.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/chromium.sh
source scripts/lib/chromium.sh
# shellcheck source=scripts/lib/pgtap.sh
source scripts/lib/pgtap.sh

TEST_PG_DIR=$ROOT/.data/test-postgres
TEST_PG_PORT=${TEST_PG_PORT:-54330}
TEST_STANDBY_DIR=$ROOT/.data/test-standby
TEST_STANDBY_PORT=${TEST_STANDBY_PORT:-$((TEST_PG_PORT + 2))}  # 54331 is the benchmark's
TEST_STANDBY_SLOT=mentor_test_standby
CI=${CI:-}
FUZZ_TIME=${FUZZ_TIME:-8s}

# What this run started, for stop_databases.
STARTED_PRIMARY=
STARTED_STANDBY=

start_test_db() {
  pg_ensure_installed || return 1
  STARTED_PRIMARY=1
  PG_EXTRA_CONF="${PG_EXTRA_CONF:+$PG_EXTRA_CONF$'\n'}$ROUTECHECK_CONF" \
    pg_start_private "$TEST_PG_DIR" "$TEST_PG_PORT" || return 1
  DATABASE_URL=$(pg_url "$TEST_PG_PORT" postgres)
  export DATABASE_URL
}

start_test_standby() {
  STARTED_STANDBY=1
  pg_start_standby "$TEST_PG_PORT" "$TEST_STANDBY_DIR" "$TEST_STANDBY_PORT" "$TEST_STANDBY_SLOT" || return 1
  TEST_DATABASE_REPLICA_URL=$(pg_url "$TEST_STANDBY_PORT" postgres)
  export TEST_DATABASE_REPLICA_URL
}

# stop_databases is the EXIT trap: it stops the standby this run started
# (it is made afresh each run, and its slot would keep WAL on the primary)
# and, under CI=true, the primary. It never fails, so the run's status is
# the tests'. A half-started cluster is stopped too.
stop_databases() {
  if [[ -n $STARTED_STANDBY ]]; then
    pg_stop_standby "$TEST_STANDBY_DIR" "$TEST_PG_PORT" "$TEST_STANDBY_SLOT" || true
  fi
  if [[ -n $STARTED_PRIMARY && $CI == true ]]; then
    pg_stop_private "$TEST_PG_DIR" || true
  fi
}

# needed_by_tests WHAT WITHOUT CMD...: runs CMD, which starts or installs
# WHAT for the tests. When it fails, CI=true ends the run, because there a
# test that needs WHAT must fail, never skip; elsewhere the run goes on
# after the warning WITHOUT, and those tests skip.
needed_by_tests() {
  local what=$1 without=$2
  shift 2
  "$@" && return 0
  [[ $CI == true ]] && die "CI=true and $what could not be had (see above)"
  warn "$without"
  return 1
}

setup_database() {
  section "Database"
  if [[ -n ${DATABASE_URL:-} ]]; then
    log "using the DATABASE_URL from the environment"
    if [[ -n ${TEST_DATABASE_REPLICA_URL:-} ]]; then
      log "and its standby, TEST_DATABASE_REPLICA_URL, from the environment"
    else
      warn "TEST_DATABASE_REPLICA_URL is not set; the read replica's tests will skip (fail under CI=true)"
    fi
    return 0
  fi
  needed_by_tests "the test database" "no test database; tests that need DATABASE_URL will skip" start_test_db || return 0
  log "DATABASE_URL=$DATABASE_URL"
  if needed_by_tests "a hot standby of the test database" "no hot standby; the read replica's tests will skip" start_test_standby; then
    log "TEST_DATABASE_REPLICA_URL=$TEST_DATABASE_REPLICA_URL"
  fi
}

# The browser end-to-end test (test/e2e/) drives headless Chromium. Like the
# database: required under CI=true, where the test fails without it;
# elsewhere a failed install only makes that test skip.
setup_browser() {
  section "Chromium"
  if needed_by_tests "Chromium" "no Chromium; the browser end-to-end test will skip" chromium_ensure_installed; then
    log "using $CHROMIUM_BIN"
  fi
}

# The race detector needs cgo, hence a C compiler (not on a minimal Debian).
ensure_cc() {
  export CGO_ENABLED=1
  if command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1; then return 0; fi
  log "no C compiler (needed by go test -race); installing gcc"
  apt_install gcc libc6-dev
}

# none_listed PROBLEM OK LIST: fails with PROBLEM and the files of LIST,
# one a line, unless LIST is empty; then says OK.
none_listed() {
  local problem=$1 ok=$2 files=$3
  if [[ -n $files ]]; then
    err "$problem"
    printf '%s\n' "$files" >&2
    return 1
  fi
  log "$ok"
}

# The repository stands alone: a user's clone has nothing beside it, so no
# code, test, script or document may reach into a sibling folder of the
# team's. (The pattern is escaped so that this file does not match itself.)
check_self_contained() {
  section "self-contained"
  none_listed "these files refer to a folder outside the repository; copy what they need into it:" \
    "nothing refers outside the repository" \
    "$(grep -rIl --exclude-dir=.git --exclude-dir=.data --exclude-dir=node_modules \
      --exclude-dir=test-artifacts -e '\.\./shared' . || true)"
}

check_gofmt() {
  section "gofmt"
  none_listed "not gofmt-formatted (fix with gofmt -w):" "all Go files formatted" \
    "$(find . \( -name .git -o -name .data -o -name node_modules -o -name test-artifacts \) -prune \
      -o -name '*.go' -type f -print0 | xargs -0 -r gofmt -l)"
}

# A package's tests may take more than go test's default 10 minutes under
# the race detector on a machine that is busy with other work (handlers
# took over 10 there); a -timeout given as an argument still wins.
run_tests() {
  section "go test -race"
  if [[ $# -gt 0 && $1 != -* ]]; then
    go test -race -count=1 -timeout 30m "$@"
  else
    go test -race -count=1 -timeout 30m ./... "$@"
  fi
}

# The database test suite runs on a fresh database of its own, as each test
# package does. Like the database and Chromium, pgTAP is required under
# CI=true; elsewhere a failed install only skips the suite. A failing test
# always fails the run.
run_db_suite() {
  section "pgTAP (supabase/tests)"
  if [[ $# -gt 0 && $1 != -* ]]; then
    log "skipped: packages were given"
    return 0
  fi
  if [[ -z ${DATABASE_URL:-} ]]; then
    warn "no database; the database test suite is skipped"
    return 0
  fi
  if ! { pgtap_ensure_prove && pgtap_ensure_extension "$DATABASE_URL"; }; then
    [[ $CI != true ]] || die "CI=true and pgTAP or pg_prove could not be installed (see above)"
    warn "no pgTAP; the database test suite is skipped"
    return 0
  fi
  # Through bash, so a checkout that lost the executable bit still works.
  bash scripts/test-db.sh
}

# fuzz_target DIR TARGET fuzzes one target for FUZZ_TIME. A failing input is
# written to DIR/testdata/fuzz/TARGET/ and fails the run. Go 1.26's fuzzing
# coordinator can also stop with "context deadline exceeded" just as
# -fuzztime ends, writing nothing (go.dev/issue/75804, fixed in Go 1.27):
# that ending, and only it, is reported and not counted as a failure.
fuzz_target() {
  local dir=$1 target=$2 corpus="$1/testdata/fuzz/$2" out before after status
  out=$(mktemp)
  before=$(find "$corpus" -type f 2>/dev/null | wc -l)
  set +e
  go test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZ_TIME" -fuzzminimizetime 1s "$dir" </dev/null 2>&1 | tee "$out"
  status=${PIPESTATUS[0]}
  set -e
  after=$(find "$corpus" -type f 2>/dev/null | wc -l)
  if ((status != 0 && after == before)) && grep -qx '    context deadline exceeded' "$out"; then
    warn "$target: the fuzzing coordinator stopped with 'context deadline exceeded' and wrote no failing input (go.dev/issue/75804); not a failure of $target"
    status=0
  fi
  rm -f "$out"
  return "$status"
}

# Each fuzz target (func FuzzX in a *_fuzz_test.go file) runs on its own, as
# go test -fuzz requires. New inputs stay in Go's cache. Shrinking inputs is
# capped so that the time goes to fuzzing.
run_fuzz() {
  section "go test -fuzz ($FUZZ_TIME per target)"
  if [[ $# -gt 0 && $1 != -* ]]; then
    log "skipped: packages were given"
    return 0
  fi
  local file target
  while IFS=: read -r file target; do
    log "$target in $(dirname "$file")"
    fuzz_target "$(dirname "$file")" "$target"
  done < <(find . \( -name .git -o -name .data -o -name node_modules -o -name test-artifacts \) -prune \
    -o -name '*_fuzz_test.go' -type f -exec grep -Ho '^func Fuzz[A-Za-z0-9_]*' {} + | sed 's/:func /:/' | sort)
}

# Citus's precondition (README "Running on Citus"): the test cluster records
# every statement the Go suite sends (pg_stat_statements), and
# cmd/routecheck then fails on one that sends a table kept per facilitator
# a statement not naming its facilitator. `routecheck -reset` goes before
# the suite, `routecheck` after it; only for the whole suite. A cluster
# that records nothing (one started before, or DATABASE_URL's own) skips
# the check, but under CI=true.
ROUTECHECK_CONF="shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.max = 100000
pg_stat_statements.track = all
pg_stat_statements.track_utility = off"
routecheck() {
  local flags=("$1")
  shift
  [[ $# -gt 0 && $1 != -* ]] && return 0
  [[ -n ${DATABASE_URL:-} ]] || return 0
  [[ $CI == true ]] || flags+=(-optional)
  [[ ${flags[0]} == -reset ]] || section "routecheck: statements Citus runs on one shard"
  go run ./cmd/routecheck "${flags[@]}"
}

main() {
  # Set before anything starts. A signal ends the run through exit, so the
  # EXIT trap runs then too.
  trap stop_databases EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ensure_go || exit 1
  ensure_cc || die "go test -race needs a C compiler"
  setup_database
  setup_browser
  check_self_contained
  check_gofmt
  section "go vet"
  go vet ./...
  routecheck -reset "$@"
  run_tests "$@"
  routecheck -check "$@"
  run_db_suite "$@"
  [[ $# -gt 0 && $1 != -* ]] || bash scripts/test-ts.sh # not when packages are given
  run_fuzz "$@"
  section "OK"
}

main "$@"
