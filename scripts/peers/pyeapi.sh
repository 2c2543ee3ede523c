#!/usr/bin/env bash
# pyeapi 1.0.4 (PyPI): Arista's own eAPI client and its configuration parsers (api.vlans, api.switchports,
# api.interfaces read `show running-config all`), so labs/tests/lab.rs can read netgw-lab's EOS simulator
# as Arista's tools do and compare with the simulated state. scripts/peers/pyeapi_read.py is the entry point.
#
#   scripts/peers/pyeapi.sh install      idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-pyeapi
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"
VENV="$PEERS/venv-pyeapi"

install() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv >/dev/null
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import pyeapi' >/dev/null 2>&1; then
        echo "pyeapi: already installed in $VENV"
        return 0
    fi
    mkdir -p "$PEERS"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check pyeapi==1.0.4
    "$VENV/bin/python" -c 'import pyeapi' >/dev/null
    echo "pyeapi: installed in $VENV"
}

case "${1:-}" in
install) install ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac
