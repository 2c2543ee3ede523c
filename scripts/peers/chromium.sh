#!/usr/bin/env bash
# Debian's Chromium: the real browser tests/it/ui_browser.rs drives headless over the DevTools protocol
# against a real `netgw serve` (docs/serve.md, "Status page").
#
#   scripts/peers/chromium.sh install   idempotent: apt-get install chromium (and a font, so text has
#                                       glyphs in screenshots), only what is missing
#
# The test finds the browser as `chromium` on PATH (or NETGW_CHROMIUM=/path/to/chromium) and fails
# loudly when it is absent.
set -euo pipefail

install() {
    local missing=()
    if ! command -v chromium >/dev/null 2>&1; then
        missing+=(chromium)
    fi
    if ! dpkg -s fonts-dejavu-core >/dev/null 2>&1; then
        missing+=(fonts-dejavu-core)
    fi
    if [ ${#missing[@]} -eq 0 ]; then
        echo "chromium: already installed ($(command -v chromium))"
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "chromium: installed ${missing[*]}"
}

case "${1:-}" in
    install) install ;;
    *) echo "usage: $0 install" >&2; exit 2 ;;
esac
