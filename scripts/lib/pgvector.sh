# shellcheck shell=bash
# pgvector (`CREATE EXTENSION vector`) for the PostgreSQL server in PG_BIN.
#
#   pgvector_ensure_installed   make the `vector` extension available to the
#                               server whose binaries are in $PG_BIN (set by
#                               pg_ensure_installed from postgres.sh); no-op
#                               when vector.control and vector.so are there
#
# Debian bookworm has no pgvector at all: neither a binary package nor a source
# package. Its successor, trixie, has the source package `pgvector`, and our
# machines reach Debian's mirrors only (no GitHub, no PGDG). So, unless apt
# offers a binary postgresql-<major>-pgvector (as trixie does for its own
# PostgreSQL), the extension is built from Debian's source package with PGXS
# against the server in PG_BIN, in .data/build/pgvector, and installed into
# that server's directories with `make install`.
#
# Returns non-zero on failure (never exits), like the other helpers, so it works
# under `set -euo pipefail` and in `if ! pgvector_ensure_installed; then`.

_PGV_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/common.sh
source "$_PGV_LIB_DIR/common.sh"

# The project root: this file is scripts/lib/pgvector.sh.
_PGV_PROJECT=$(cd "$_PGV_LIB_DIR/../.." && pwd)

# The Debian suite whose source package is built. A named release (not
# `stable`/`unstable`) so that every machine builds the same pgvector.
PGVECTOR_SRC_SUITE=${PGVECTOR_SRC_SUITE:-trixie}
# Our own deb-src entry: a separate file, so that the system's debian.sources is
# never edited.
PGVECTOR_APT_SOURCES=${PGVECTOR_APT_SOURCES:-/etc/apt/sources.list.d/mentor-deb-src.sources}
# Source, objects and the build log stay inside the project, next to the
# private clusters (.data is not committed).
PGVECTOR_BUILD_DIR=${PGVECTOR_BUILD_DIR:-$_PGV_PROJECT/.data/build/pgvector}

# _pgv_major BIN: the PostgreSQL major version of BIN, from Debian's layout
# /usr/lib/postgresql/<major>/bin (as postgres.sh does), else from pg_config.
_pgv_major() {
  local bin=$1 ver
  ver=${bin%/}
  ver=${ver%/bin}
  ver=${ver##*/}
  if [[ ! $ver =~ ^[0-9]+$ ]]; then
    # "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)" -> 15
    ver=$("$bin/pg_config" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p') || ver=
  fi
  [[ $ver =~ ^[0-9]+$ ]] || { err "cannot tell the PostgreSQL major version of $bin"; return 1; }
  printf '%s\n' "$ver"
}

# _pgv_installed BIN MAJOR: are vector.control and vector.so where the server
# in BIN looks for them? pg_config comes with postgresql-client-<major> (and
# the -dev package); without it, use Debian's paths like _pg_has_contrib. The
# library is checked too, so that a half-finished install is not taken for a
# good one.
_pgv_installed() {
  local bin=$1 major=$2 share lib
  share=$("$bin/pg_config" --sharedir 2>/dev/null) || share=/usr/share/postgresql/$major
  lib=$("$bin/pg_config" --pkglibdir 2>/dev/null) || lib=/usr/lib/postgresql/$major/lib
  [[ -f $share/extension/vector.control && -f $lib/vector.so ]]
}

# _pgv_write_deb_src: write PGVECTOR_APT_SOURCES, a deb-src entry for
# PGVECTOR_SRC_SUITE with the URIs and Signed-By of the Debian archive entry in
# debian.sources (a machine may use another mirror or a proxy). Only that suite:
# bookworm's own sources have no pgvector, and would only add a 10 MB index to
# every `apt-get update`. deb-src entries never change which binary packages
# apt installs.
_pgv_write_deb_src() {
  local system=/etc/apt/sources.list.d/debian.sources parsed=
  local uris=http://deb.debian.org/debian signed=/usr/share/keyrings/debian-archive-keyring.gpg
  if [[ -r $system ]]; then
    # The first stanza of type deb that is the archive (not debian-security):
    # print its URIs and Signed-By, tab-separated.
    parsed=$(awk 'BEGIN { RS = ""; FS = "\n" }
      {
        types = uris = signed = ""
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^#/) continue
          key = tolower(line); sub(/:.*/, "", key)
          sub(/^[^:]*:[ \t]*/, "", line)
          if (key == "types") types = line
          else if (key == "uris") uris = line
          else if (key == "signed-by") signed = line
        }
        if (types ~ /(^|[ \t])deb([ \t]|$)/ && uris != "" && uris !~ /security/) {
          printf "%s\t%s\n", uris, signed
          exit
        }
      }' "$system") || parsed=
  fi
  if [[ -n $parsed ]]; then
    IFS=$'\t' read -r uris signed <<<"$parsed"
  else
    warn "no Debian archive entry found in $system; using $uris"
  fi
  log "adding deb-src for Debian $PGVECTOR_SRC_SUITE ($uris) in $PGVECTOR_APT_SOURCES"
  {
    printf '# Written by scripts/lib/pgvector.sh: Debian %s source packages, to build\n' "$PGVECTOR_SRC_SUITE"
    printf '# pgvector for the local PostgreSQL. Source only: no binary comes from here.\n'
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n' "$uris" "$PGVECTOR_SRC_SUITE"
    # An empty Signed-By (an inline key block) falls back to apt's keyrings.
    if [[ -n $signed ]]; then printf 'Signed-By: %s\n' "$signed"; fi
  } | as_root tee "$PGVECTOR_APT_SOURCES" >/dev/null || { err "cannot write $PGVECTOR_APT_SOURCES"; return 1; }
}

# _pgv_apt_update: apt_install updates only once per process, possibly before
# the deb-src entry existed; the source index must be fetched now.
_pgv_apt_update() {
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
  log "apt-get update (with the deb-src entry)"
  as_root "${apt[@]}" update >&2 || { err "apt-get update failed"; return 1; }
  # Fresh lists: apt_install (common.sh) need not update again in this process.
  _MM_APT_UPDATED=1
}

# _pgv_has_candidate PKG: does apt offer a binary package PKG?
# (Output captured first: `grep -q` stops reading early, and under pipefail
# apt-cache's SIGPIPE would turn a match into a failure.)
_pgv_has_candidate() {
  local policy
  policy=$(LC_ALL=C apt-cache policy "$1" 2>/dev/null) || return 1
  grep -q '^  Candidate: [^(]' <<<"$policy"
}

# _pgv_missing PKG[=VER]...: print the packages that are not installed.
# Installed ones are left alone: `apt-get install` would upgrade them (dpkg-dev
# drags dpkg along), which is not this function's business.
_pgv_missing() {
  local p
  for p in "$@"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "${p%%=*}" 2>/dev/null) != installed ]]; then
      printf '%s\n' "$p"
    fi
  done
}

# _pgv_server_dev BIN MAJOR: the -dev package to build against, pinned to the
# version of the installed server when the mirror still has it. Unpinned, apt
# would take the newest point release (e.g. from bookworm-security) and upgrade
# postgresql-<major> itself under the clusters that are running.
_pgv_server_dev() {
  local bin=$1 major=$2 dev=postgresql-server-dev-$2 owner ver
  if owner=$(dpkg-query -S "$bin/postgres" 2>/dev/null); then
    owner=${owner%%:*}
    ver=$(dpkg-query -W -f='${Version}' "$owner" 2>/dev/null) || ver=
    # madison: " NAME | VERSION | URI SUITE/COMPONENT ARCH Packages" (or Sources).
    if [[ -n $ver ]] && apt-cache madison "$dev" 2>/dev/null |
      awk -F'|' -v p="$dev" -v v="$ver" '
        { for (i = 1; i <= 3; i++) gsub(/^ +| +$/, "", $i) }
        $1 == p && $2 == v && $3 ~ / Packages$/ { f = 1 }
        END { exit !f }'; then
      printf '%s=%s\n' "$dev" "$ver"
      return 0
    fi
    warn "$dev $ver (the version of $owner) is not on the mirror; taking apt's candidate"
  fi
  printf '%s\n' "$dev"
}

# _pgv_install_build_deps BIN MAJOR: PGXS headers and makefiles, a C compiler
# (gcc installs without libc6-dev when recommends are off), and dpkg-dev for
# `apt-get source` (it unpacks with dpkg-source).
_pgv_install_build_deps() {
  local bin=$1 major=$2 dev missing
  dev=$(_pgv_server_dev "$bin" "$major") || return 1
  missing=$(_pgv_missing "$dev" make gcc libc6-dev dpkg-dev)
  [[ -z $missing ]] && return 0
  # shellcheck disable=SC2086 # one package per word
  apt_install $missing
}

# _pgv_make_args BIN: print the make arguments, one per line.
_pgv_make_args() {
  local bin=$1 global with_llvm clang
  printf '%s\n' "PG_CONFIG=$bin/pg_config"
  # Upstream's Makefile defaults to -march=native: a binary for this very CPU,
  # which dies with SIGILL if the machine's disk later runs on an older one.
  # Debian's no-native patch removes that; OPTFLAGS= keeps it off even for a
  # source version without the patch.
  printf '%s\n' "OPTFLAGS="
  # Debian's server is built with LLVM JIT, so PGXS also compiles LLVM bitcode
  # with the clang recorded at the server's build. postgresql-server-dev
  # depends on that clang today; if it is missing anyway, skip the bitcode
  # (JIT inlining of pgvector's functions only) rather than fail.
  global=$(dirname "$("$bin/pg_config" --pgxs)")/../Makefile.global
  with_llvm=$(sed -n 's/^with_llvm[[:space:]]*=[[:space:]]*//p' "$global" 2>/dev/null) || with_llvm=
  clang=$(sed -n 's/^CLANG[[:space:]]*=[[:space:]]*//p' "$global" 2>/dev/null) || clang=
  if [[ $with_llvm == yes ]] && ! command -v "${clang%% *}" >/dev/null 2>&1; then
    log "${clang:-clang} not installed; building pgvector without LLVM bitcode"
    printf '%s\n' "with_llvm=no"
  fi
}

# _pgv_build BIN: fetch Debian's pgvector source into PGVECTOR_BUILD_DIR
# (emptied first: no stale objects from another PostgreSQL version), build it
# and install it as root. Compiler output goes to a log next to the build
# directory, shown on failure.
_pgv_build() {
  local bin=$1 dir=$PGVECTOR_BUILD_DIR logf src args=() jobs
  logf=$(dirname "$dir")/$(basename "$dir").log
  [[ -x $bin/pg_config ]] || { err "$bin/pg_config not found after installing the -dev package"; return 1; }
  rm -rf "${dir:?}" || { err "cannot empty $dir"; return 1; }
  mkdir -p "$dir" || { err "cannot create $dir"; return 1; }
  : >"$logf" || return 1
  log "apt-get source pgvector/$PGVECTOR_SRC_SUITE into $dir"
  # No root needed: apt checks the files against the signed Sources index.
  # (As root apt notes that the download is unsandboxed; that is harmless.)
  if ! (cd "$dir" && apt-get -q source "pgvector/$PGVECTOR_SRC_SUITE") >>"$logf" 2>&1; then
    err "apt-get source pgvector/$PGVECTOR_SRC_SUITE failed; last lines of $logf:"
    tail -n 20 "$logf" >&2
    return 1
  fi
  src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
  [[ -n $src ]] || { err "no pgvector-* directory in $dir after apt-get source"; return 1; }
  mapfile -t args < <(_pgv_make_args "$bin")
  jobs=$(nproc 2>/dev/null || echo 1)
  log "building $(basename "$src") for $("$bin/pg_config" --version); log: $logf"
  if ! make -C "$src" -j"$jobs" "${args[@]}" >>"$logf" 2>&1; then
    err "building pgvector failed; last lines of $logf:"
    tail -n 30 "$logf" >&2
    return 1
  fi
  # Root: the files go to the server's lib and share directories.
  log "installing pgvector into $("$bin/pg_config" --pkglibdir) and $("$bin/pg_config" --sharedir)/extension"
  if ! as_root make -C "$src" "${args[@]}" install >>"$logf" 2>&1; then
    err "installing pgvector failed; last lines of $logf:"
    tail -n 30 "$logf" >&2
    return 1
  fi
}

pgvector_ensure_installed() {
  local bin=${PG_BIN:-} major start=$SECONDS pkg
  if [[ -z $bin || ! -x $bin/postgres ]]; then
    err "PG_BIN (${bin:-unset}) is not a PostgreSQL bin directory; call pg_ensure_installed first"
    return 1
  fi
  major=$(_pgv_major "$bin") || return 1
  _pgv_installed "$bin" "$major" && return 0

  log "pgvector missing for PostgreSQL $major ($bin); installing it"
  command -v apt-get >/dev/null 2>&1 || { err "apt-get not found; please install pgvector for PostgreSQL $major"; return 1; }
  _pgv_write_deb_src || return 1
  _pgv_apt_update || return 1
  pkg=postgresql-$major-pgvector
  if _pgv_has_candidate "$pkg"; then
    # A Debian package built for this very server: nothing to compile.
    apt_install "$pkg" || return 1
  else
    _pgv_install_build_deps "$bin" "$major" || return 1
    _pgv_build "$bin" || return 1
  fi
  if ! _pgv_installed "$bin" "$major"; then
    err "pgvector still missing for PostgreSQL $major after installing it (no vector.control or vector.so)"
    return 1
  fi
  log "pgvector installed for PostgreSQL $major in $((SECONDS - start)) s"
}
