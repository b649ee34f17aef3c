# shellcheck shell=bash
# pgTAP, the database test suite's framework, and pg_prove, its runner.
#
#   pgtap_ensure_prove           install pg_prove (and psql) when missing
#   pgtap_available URL          does the server behind URL offer pgtap?
#   pgtap_ensure_extension URL   make it offer pgtap: Debian's
#                                postgresql-<major>-pgtap is installed when
#                                the server runs on this machine
#   pgtap_prove URL ARGS...      run pg_prove against the database at URL
#
# Returns non-zero on failure (never exits), like the other helpers, so the
# caller decides: scripts/test.sh fails under CI=true and skips elsewhere.

_PGTAP_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/common.sh
source "$_PGTAP_LIB_DIR/common.sh"

# _pgtap_query URL SQL: print the single value SQL returns.
_pgtap_query() {
  psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

pgtap_ensure_prove() {
  if ! command -v psql >/dev/null 2>&1; then
    log "psql not found; installing postgresql-client"
    apt_install postgresql-client || return 1
  fi
  if ! command -v pg_prove >/dev/null 2>&1; then
    log "pg_prove not found; installing Debian's libtap-parser-sourcehandler-pgtap-perl"
    apt_install libtap-parser-sourcehandler-pgtap-perl || return 1
    command -v pg_prove >/dev/null 2>&1 || { err "pg_prove still not found after installing it"; return 1; }
  fi
}

# The test files create the extension themselves, inside their transaction,
# as `supabase test db` does; the server only has to offer it. Supabase's
# always does.
pgtap_available() {
  local available
  available=$(_pgtap_query "$1" "select exists (select from pg_available_extensions where name = 'pgtap')") || return 1
  [[ $available == t ]]
}

pgtap_ensure_extension() {
  local url=$1 major
  pgtap_available "$url" && return 0
  major=$(_pgtap_query "$url" "select current_setting('server_version_num')::int / 10000") || return 1
  log "the database server offers no pgtap extension; installing postgresql-$major-pgtap"
  apt_install "postgresql-$major-pgtap" || return 1
  if ! pgtap_available "$url"; then
    err "postgresql-$major-pgtap is installed here, but the server behind DATABASE_URL still offers no pgtap: install pgTAP where that server runs"
    return 1
  fi
}

# pgtap_prove URL ARGS...: pg_prove against the database at URL, any
# connection string psql takes. pg_prove splits its own --dbname at "=",
# so a connection string with parameters (?sslmode=require) cannot pass
# through it: pg_prove runs a psql that adds URL itself. A password is
# better given in PGPASSWORD than in URL, which the process list shows.
pgtap_prove() {
  local url=$1 dir status=0
  shift
  dir=$(mktemp -d) || return 1
  # shellcheck disable=SC2016 # expanded by the wrapper, when pg_prove runs it
  printf '#!/bin/sh\nexec psql "$@" --dbname "$PGTAP_DATABASE_URL"\n' >"$dir/psql"
  chmod +x "$dir/psql"
  PGTAP_DATABASE_URL=$url pg_prove --psql-bin "$dir/psql" "$@" || status=$?
  rm -rf "$dir"
  return "$status"
}
