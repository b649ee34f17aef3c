# shellcheck shell=bash
# Private PostgreSQL clusters for development and tests.
#
# A private cluster keeps its data inside the project (e.g. .data/postgres),
# listens only on 127.0.0.1:PORT and on a unix socket in DIR/../run, and logs
# to DIR/../<name of DIR>.log. It never touches the system cluster of the
# Debian package. Authentication is `trust`: acceptable only because the
# cluster is a throwaway for dev/tests bound to the loopback interface.
#
#   pg_ensure_installed          install PostgreSQL, contrib and pgvector if missing; sets PG_BIN
#   pg_start_private DIR PORT    create (first time) and start; no-op if running
#                                (PG_EXTRA_CONF: settings appended to the cluster's own)
#   pg_stop_private DIR          stop if running
#   pg_start_standby PRIMARY_PORT DIR PORT SLOT
#                                make DIR afresh a streaming hot standby of the
#                                private cluster on PRIMARY_PORT and start it
#   pg_stop_standby DIR PRIMARY_PORT SLOT
#                                stop it, drop its slot on the primary, remove DIR
#   pg_url PORT DB               print the connection URL of a database
#   pg_create_db PORT NAME       create database NAME if missing
#   with_database URL NAME       URL with its database replaced by NAME
#
# Functions return non-zero on failure (they never exit), so they work both
# under `set -euo pipefail` and in `if ! pg_start_private ...; then`.

_PG_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/common.sh
source "$_PG_LIB_DIR/common.sh"
# shellcheck source=scripts/lib/pgvector.sh
source "$_PG_LIB_DIR/pgvector.sh"

# The OS account a root-run cluster runs as when the Debian `postgres` user
# does not exist (PostgreSQL refuses to run as root).
PG_FALLBACK_OS_USER=mentorpg

# _pg_newest_bin: print the newest /usr/lib/postgresql/<ver>/bin that holds
# both initdb and pg_ctl (Debian keeps them off PATH).
_pg_newest_bin() {
  local d found=()
  for d in /usr/lib/postgresql/*/bin; do
    [[ -x $d/initdb && -x $d/pg_ctl ]] && found+=("$d")
  done
  ((${#found[@]})) || return 1
  printf '%s\n' "${found[@]}" | sort -V | tail -n 1
}

# _pg_has_contrib BIN: do pg_trgm and btree_gin (postgresql-contrib) exist for
# the server in BIN? The migrations need both.
_pg_has_contrib() {
  local bin=$1 share ver
  ver=${bin%/bin}
  ver=${ver##*/}
  share=$("$bin/pg_config" --sharedir 2>/dev/null) || share=/usr/share/postgresql/$ver
  [[ -f $share/extension/pg_trgm.control && -f $share/extension/btree_gin.control ]]
}

pg_ensure_installed() {
  local bin
  if ! bin=$(_pg_newest_bin); then
    log "PostgreSQL server not found in /usr/lib/postgresql; installing it"
    apt_install postgresql postgresql-contrib || return 1
    bin=$(_pg_newest_bin) || { err "PostgreSQL still not found after installing it"; return 1; }
  fi
  if ! _pg_has_contrib "$bin"; then
    log "pg_trgm/btree_gin missing for $bin; installing postgresql-contrib"
    apt_install postgresql-contrib || return 1
    _pg_has_contrib "$bin" || { err "pg_trgm/btree_gin still missing for $bin"; return 1; }
  fi
  PG_BIN=$bin
  export PG_BIN
  # The learner memories keep their embeddings in pgvector.
  pgvector_ensure_installed || return 1
}

# _pg_bin_for DATA: the server binaries matching the cluster in DATA (its
# PG_VERSION), or the newest ones for a cluster not created yet.
_pg_bin_for() {
  local data=$1 ver
  if [[ -f $data/PG_VERSION ]]; then
    ver=$(<"$data/PG_VERSION")
    if [[ -x /usr/lib/postgresql/$ver/bin/pg_ctl ]]; then
      printf '%s\n' "/usr/lib/postgresql/$ver/bin"
      return 0
    fi
    err "$data was created by PostgreSQL $ver, which is not installed; delete $data to recreate it"
    return 1
  fi
  if [[ -n ${PG_BIN:-} ]]; then printf '%s\n' "$PG_BIN"; else _pg_newest_bin; fi
}

# _pg_os_user DATA: the OS account that owns and runs the cluster. Non-root
# callers run it as themselves. Root must hand it to an unprivileged user:
# the owner of an existing cluster, else `postgres` (Debian package), else a
# system user created for the purpose.
_pg_os_user() {
  local data=$1 owner
  if [[ $EUID -ne 0 ]]; then id -un; return 0; fi
  if [[ -f $data/PG_VERSION ]]; then
    owner=$(stat -c %U "$data")
    if [[ $owner != root && $owner != UNKNOWN ]]; then printf '%s\n' "$owner"; return 0; fi
  fi
  if id postgres >/dev/null 2>&1; then echo postgres; return 0; fi
  if ! id "$PG_FALLBACK_OS_USER" >/dev/null 2>&1; then
    log "creating system user $PG_FALLBACK_OS_USER to run PostgreSQL"
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$PG_FALLBACK_OS_USER" >&2 || return 1
  fi
  echo "$PG_FALLBACK_OS_USER"
}

# _pg_as USER CMD...: run CMD as USER. From `/`, because PostgreSQL tools fail
# when they cannot read their working directory (e.g. root's 0700 home).
_pg_as() {
  local user=$1
  shift
  if [[ $user == "$(id -un)" ]]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    (cd / && runuser -u "$user" -- "$@")
  else
    (cd / && su -s /bin/bash "$user" -c "$(printf '%q ' "$@")")
  fi
}

# _pg_make_reachable USER DIR: USER must traverse every directory down to DIR.
# Clones often live under root-owned 0700 dirs (/root); grant search-only
# permission (o+x: enter, not list) where needed, so the data stays in the
# project.
_pg_make_reachable() {
  local user=$1 d=$2 dirs=()
  [[ $EUID -eq 0 ]] || return 0
  while [[ $d != / && -n $d ]]; do
    dirs=("$d" "${dirs[@]}")
    d=$(dirname "$d")
  done
  for d in "${dirs[@]}"; do
    if ! _pg_as "$user" test -x "$d"; then
      log "chmod o+x $d (so $user can reach the cluster)"
      chmod o+x "$d" || return 1
    fi
  done
}

# _pg_prepare USER DATA RUN LOG: create the directories and the log file, and
# give them to USER.
_pg_prepare() {
  local user=$1 data=$2 run=$3 logf=$4
  mkdir -p "$data" "$run" || return 1
  touch "$logf" || return 1
  [[ $EUID -eq 0 ]] || return 0
  _pg_make_reachable "$user" "$(dirname "$data")" || return 1
  # -R only when needed: an existing cluster is already owned by its user.
  if [[ $(stat -c %U "$data") != "$user" ]]; then
    chown -R "$user:" "$data" || return 1
  fi
  chown "$user:" "$run" "$logf" || return 1
  chmod 0700 "$run" || return 1
}

# _pg_initdb USER BIN DATA LOG: create the cluster (superuser `postgres`,
# UTF8, C.UTF-8 collation when the system has it: byte order, no surprises).
_pg_initdb() {
  local user=$1 bin=$2 data=$3 logf=$4 locale=C locales
  locales=$(locale -a 2>/dev/null || true)
  if grep -qiE '^c\.utf-?8$' <<<"$locales"; then locale=C.UTF-8; fi
  log "initializing PostgreSQL cluster in $data (locale $locale)"
  if ! _pg_as "$user" "$bin/initdb" -D "$data" --username=postgres --auth=trust \
    --encoding=UTF8 --locale="$locale" >>"$logf" 2>&1; then
    err "initdb failed; see $logf"
    tail -n 20 "$logf" >&2
    return 1
  fi
  # Our settings live in mentor.conf, rewritten at every start.
  printf "\ninclude_if_exists = 'mentor.conf'\n" >>"$data/postgresql.conf" || return 1
}

# _pg_write_conf USER DATA PORT RUN: the settings of a private cluster.
_pg_write_conf() {
  local user=$1 data=$2 port=$3 run=$4 sockets
  sockets=${run//\'/\'\'}
  # A unix socket path is limited to 107 bytes; past that, TCP only.
  if ((${#run} + ${#port} + 11 > 107)); then
    warn "socket path in $run is too long; the cluster will listen on TCP only"
    sockets=
  fi
  cat >"$data/mentor.conf" <<EOF || return 1
# Written by scripts/lib/postgres.sh at every start; edits are lost.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sockets'
# Sized for a small (2 core) machine running the service and its tests.
max_connections = 200
shared_buffers = 256MB
# Durability stays on, even for dev/test data.
fsync = on
synchronous_commit = on
full_page_writes = on
# Any private cluster can feed a streaming hot standby (pg_start_standby).
# A standby's replication slot keeps the WAL it has not received, but never
# more than max_slot_wal_keep_size: one gone for good cannot fill the disk.
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
max_slot_wal_keep_size = 1GB
${PG_EXTRA_CONF:-}
EOF
  [[ $EUID -ne 0 ]] || chown "$user:" "$data/mentor.conf"
}

# _pg_allow_replication DATA: a standby (pg_basebackup, then its WAL
# receiver) connects to the `replication` pseudo-database, which `all` does
# not cover. initdb writes these lines; a cluster made otherwise gets them.
_pg_allow_replication() {
  local hba=$1/pg_hba.conf
  grep -qE '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba" &&
    return 0
  log "allowing local replication connections in $hba"
  printf 'host    replication     all             127.0.0.1/32            trust\n' >>"$hba"
}

# _pg_wait_ready BIN PORT LOG: wait (30 s at most) until the server accepts
# connections on 127.0.0.1:PORT.
_pg_wait_ready() {
  local bin=$1 port=$2 logf=$3 deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 2 && return 0
    sleep 1
  done
  err "PostgreSQL is not answering on 127.0.0.1:$port after 30 s; last lines of $logf:"
  tail -n 30 "$logf" >&2
  return 1
}

pg_start_private() {
  local data port base run logf bin user running_port
  if [[ $# -ne 2 ]]; then err "usage: pg_start_private DIR PORT"; return 1; fi
  port=$2
  mkdir -p "$1" || return 1
  data=$(cd "$1" && pwd -P) || return 1
  base=$(dirname "$data")
  run=$base/run
  logf=$base/$(basename "$data").log
  bin=$(_pg_bin_for "$data") || { err "no PostgreSQL found; call pg_ensure_installed"; return 1; }
  user=$(_pg_os_user "$data") || return 1

  if _pg_as "$user" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    # Running already: reuse it, unless it listens elsewhere.
    running_port=$(sed -n 4p "$data/postmaster.pid" 2>/dev/null || true)
    if [[ -n $running_port && $running_port != "$port" ]]; then
      err "the cluster in $data runs on port $running_port, not $port; stop it first"
      return 1
    fi
    log "PostgreSQL in $data already running on 127.0.0.1:$port"
  else
    _pg_prepare "$user" "$data" "$run" "$logf" || return 1
    if [[ ! -f $data/PG_VERSION ]]; then
      _pg_initdb "$user" "$bin" "$data" "$logf" || return 1
    fi
    _pg_write_conf "$user" "$data" "$port" "$run" || return 1
    _pg_allow_replication "$data" || return 1
    log "starting PostgreSQL ($bin) in $data on 127.0.0.1:$port as $user; log: $logf"
    if ! _pg_as "$user" "$bin/pg_ctl" -D "$data" -l "$logf" -w -t 30 start >&2; then
      err "PostgreSQL did not start; last lines of $logf:"
      tail -n 30 "$logf" >&2
      return 1
    fi
  fi
  _pg_wait_ready "$bin" "$port" "$logf"
}

pg_stop_private() {
  local data bin user
  if [[ $# -ne 1 ]]; then err "usage: pg_stop_private DIR"; return 1; fi
  [[ -f $1/PG_VERSION ]] || return 0
  data=$(cd "$1" && pwd -P) || return 1
  bin=$(_pg_bin_for "$data") || return 1
  user=$(_pg_os_user "$data") || return 1
  if _pg_as "$user" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    log "stopping PostgreSQL in $data"
    _pg_as "$user" "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >&2
  fi
}

# _pg_psql PORT SQL...: run SQL (psql -c each) as the superuser on the
# private cluster at PORT; prints the results unaligned, one a line.
_pg_psql() {
  local port=$1 bin arg args=()
  shift
  bin=${PG_BIN:-$(_pg_newest_bin)} || return 1
  for arg in "$@"; do args+=(-c "$arg"); done
  "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 "$(pg_url "$port" postgres)" "${args[@]}"
}

# _pg_drop_slot PORT SLOT: drop replication slot SLOT on the cluster at PORT
# if it exists. A standby just stopped may still hold it for a moment (its
# WAL sender has not exited yet), so this tries for 10 s.
_pg_drop_slot() {
  local port=$1 slot=$2 deadline=$((SECONDS + 10))
  [[ $slot =~ ^[a-z0-9_]+$ ]] || { err "bad replication slot name: $slot"; return 1; }
  while :; do
    _pg_psql "$port" "select pg_drop_replication_slot(slot_name) from pg_replication_slots
      where slot_name = '$slot'" >/dev/null 2>&1 && return 0
    ((SECONDS < deadline)) || break
    sleep 0.5
  done
  err "could not drop replication slot $slot on port $port"
  return 1
}

# _pg_remove_standby DATA: remove a standby's directory, after checking it
# is one (pg_start_standby's, with standby.signal), or empty.
_pg_remove_standby() {
  local data=$1
  [[ -d $data ]] || return 0
  if [[ -f $data/standby.signal || -z $(ls -A "$data") ]]; then
    rm -rf "$data"
  else
    err "$data is not a standby made by pg_start_standby; not removing it"
    return 1
  fi
}

# pg_start_standby PRIMARY_PORT DIR PORT SLOT: make DIR a streaming hot
# standby of the private cluster on 127.0.0.1:PRIMARY_PORT and start it on
# 127.0.0.1:PORT, as pg_start_private starts a cluster. DIR is made afresh
# each time (a copy of a small test cluster takes a second or two), so it
# never follows a primary that was recreated since. pg_basebackup -R writes
# the connection to the primary and standby.signal; the replication slot
# SLOT keeps the WAL the standby has not received yet, so a standby that
# stops or falls behind catches up (up to the primary's
# max_slot_wal_keep_size). Returns once the standby streams.
pg_start_standby() {
  local primary_port port slot data base run logf bin user deadline version
  if [[ $# -ne 4 ]]; then err "usage: pg_start_standby PRIMARY_PORT DIR PORT SLOT"; return 1; fi
  primary_port=$1 port=$3 slot=$4
  mkdir -p "$2" || return 1
  data=$(cd "$2" && pwd -P) || return 1
  base=$(dirname "$data")
  run=$base/run
  logf=$base/$(basename "$data").log

  # Left over from an earlier run: stopped and removed first.
  if [[ -f $data/PG_VERSION ]]; then pg_stop_private "$data" || return 1; fi
  _pg_remove_standby "$data" || return 1
  _pg_drop_slot "$primary_port" "$slot" || return 1

  # The standby runs the primary's major version.
  version=$(_pg_psql "$primary_port" "select current_setting('server_version_num')::int / 10000") || {
    err "the primary on port $primary_port does not answer"
    return 1
  }
  bin=/usr/lib/postgresql/$version/bin
  [[ -x $bin/pg_basebackup ]] || { err "pg_basebackup of PostgreSQL $version not found in $bin"; return 1; }
  user=$(_pg_os_user "$data") || return 1
  _pg_prepare "$user" "$data" "$run" "$logf" || return 1
  chmod 0700 "$data" || return 1

  log "copying the cluster on port $primary_port into $data (pg_basebackup, slot $slot)"
  # --checkpoint=fast: the copy starts now, not at the primary's next
  # checkpoint, which may be minutes away.
  if ! _pg_as "$user" "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$data" \
    -R -X stream -C -S "$slot" --checkpoint=fast >>"$logf" 2>&1; then
    err "pg_basebackup failed; last lines of $logf:"
    tail -n 20 "$logf" >&2
    return 1
  fi
  # hot_standby_feedback: the primary's vacuum keeps the rows a query on the
  # standby still reads, so long reads (an export) are not cancelled.
  PG_EXTRA_CONF=$'hot_standby = on\nhot_standby_feedback = on\nshared_buffers = 128MB' \
    pg_start_private "$data" "$port" || return 1

  deadline=$((SECONDS + 30))
  until [[ $(_pg_psql "$port" "select status from pg_stat_wal_receiver" 2>/dev/null) == streaming ]]; do
    if ((SECONDS >= deadline)); then
      err "the standby on port $port does not stream from port $primary_port after 30 s; last lines of $logf:"
      tail -n 30 "$logf" >&2
      return 1
    fi
    sleep 0.2
  done
  log "standby of port $primary_port streaming on 127.0.0.1:$port"
}

# pg_stop_standby DIR PRIMARY_PORT SLOT: stop the standby in DIR, drop its
# slot on the primary (so the primary keeps no WAL for it) and remove DIR.
# Each step is tried even when one before it failed.
pg_stop_standby() {
  local status=0
  if [[ $# -ne 3 ]]; then err "usage: pg_stop_standby DIR PRIMARY_PORT SLOT"; return 1; fi
  pg_stop_private "$1" || status=1
  if ((status == 0)); then _pg_remove_standby "$1" || status=1; fi
  # The primary may be stopped already (its slot then waits for next time).
  if _pg_psql "$2" "select 1" >/dev/null 2>&1; then
    _pg_drop_slot "$2" "$3" || status=1
  fi
  return "$status"
}

pg_url() {
  printf 'postgres://postgres@127.0.0.1:%s/%s?sslmode=disable\n' "$1" "$2"
}

# pg_create_db PORT NAME: create database NAME on the private cluster at PORT
# unless it exists (the superuser owns it).
pg_create_db() {
  local port=$1 name=$2 bin
  bin=${PG_BIN:-$(_pg_newest_bin)} || return 1
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 -v dbname="$name" "$(pg_url "$port" postgres)" <<'SQL'
SELECT format('CREATE DATABASE %I', :'dbname')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'dbname')
\gexec
SQL
}

# with_database URL NAME: URL with its database replaced by NAME, for both
# the URL and the keyword/value forms of a connection string.
with_database() {
  local url=$1 name=$2
  if [[ $url =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]]; then
    printf '%s/%s%s\n' "${BASH_REMATCH[1]}" "$name" "${BASH_REMATCH[4]}"
  else
    printf '%s dbname=%s\n' "$url" "$name"
  fi
}
