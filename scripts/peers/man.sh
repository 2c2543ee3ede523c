#!/usr/bin/env bash
# man-db and groff (Debian): tests/it/cli.rs renders the man pages `netgw man` writes with `man -l`
# and checks them with `groff -man -ww`, and loads `netgw completions bash` in bash.
#
#   scripts/peers/man.sh install     idempotent: apt-get install man-db groff-base, only what is missing
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install() {
    local missing=()
    command -v man >/dev/null 2>&1 || missing+=(man-db)
    command -v groff >/dev/null 2>&1 || missing+=(groff-base)
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
    echo "man: ready ($(command -v man), $(command -v groff))"
}

install_only_main "$@"
