# shellcheck shell=bash
# Headless Chromium for the browser end-to-end test (e2e/).
#
#   chromium_ensure_installed   install Debian's chromium when CHROMIUM_BIN
#                               (default /usr/bin/chromium) is missing
#
# Returns non-zero on failure (never exits), like the other helpers, so the
# caller decides: scripts/test.sh fails under CI=true and lets the e2e test
# skip elsewhere.

_CHROMIUM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/common.sh
source "$_CHROMIUM_LIB_DIR/common.sh"

# The e2e test reads the same variable.
CHROMIUM_BIN=${CHROMIUM_BIN:-/usr/bin/chromium}
export CHROMIUM_BIN

chromium_ensure_installed() {
  if [[ -x $CHROMIUM_BIN ]]; then
    return 0
  fi
  log "Chromium not found at $CHROMIUM_BIN; installing Debian's chromium for the e2e test"
  # apt_install skips recommended packages, and with them every font:
  # the screenshots would show boxes instead of text without DejaVu.
  apt_install chromium fonts-dejavu-core || return 1
  [[ -x $CHROMIUM_BIN ]] || { err "chromium installed, but $CHROMIUM_BIN is still missing"; return 1; }
}
