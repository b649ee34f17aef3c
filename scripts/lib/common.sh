# shellcheck shell=bash
# Helpers shared by the scripts under scripts/: messages, Go on PATH, and
# package installs. Sourced, never executed; safe under `set -euo pipefail`.
# Functions report failure with a non-zero status instead of exiting, so a
# caller can decide what a failure means (e.g. test.sh outside CI).

[[ -n "${_MM_COMMON_LOADED:-}" ]] && return 0
_MM_COMMON_LOADED=1

# Messages go to stderr so that functions can print results on stdout.
log()     { printf '==> %s\n' "$*" >&2; }
warn()    { printf 'WARNING: %s\n' "$*" >&2; }
err()     { printf 'ERROR: %s\n' "$*" >&2; }
die()     { err "$*"; exit 1; }
section() { printf '\n======== %s ========\n' "$*" >&2; }

# ensure_go: Go lives in /usr/local/go/bin, which a fresh shell or CI runner
# does not necessarily have on PATH.
ensure_go() {
  if [[ -d /usr/local/go/bin && ":$PATH:" != *":/usr/local/go/bin:"* ]]; then
    PATH="/usr/local/go/bin:$PATH"
  fi
  export PATH
  command -v go >/dev/null 2>&1 || { err "go not found (expected in /usr/local/go/bin)"; return 1; }
}

# as_root CMD...: run CMD as root, through sudo when we are not root. Without a
# terminal (CI) sudo must not wait for a password that nobody will type.
as_root() {
  if [[ $EUID -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    if [[ -t 0 ]]; then sudo "$@"; else sudo -n "$@"; fi
  else
    err "root is needed to run '$*', and sudo is not installed"
    return 1
  fi
}

# apt_install PKG...: install Debian packages non-interactively. A fresh
# machine has empty package lists, so run `apt-get update` first (once per
# process).
_MM_APT_UPDATED=
apt_install() {
  command -v apt-get >/dev/null 2>&1 || { err "apt-get not found; please install: $*"; return 1; }
  # Wait for a concurrent apt/dpkg (e.g. unattended upgrades) instead of failing.
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
  if [[ -z $_MM_APT_UPDATED ]]; then
    log "apt-get update"
    as_root "${apt[@]}" update || { err "apt-get update failed"; return 1; }
    _MM_APT_UPDATED=1
  fi
  log "apt-get install $*"
  as_root "${apt[@]}" install -y --no-install-recommends "$@" || { err "apt-get install $* failed"; return 1; }
}
