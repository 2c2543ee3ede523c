#!/usr/bin/env bash
# TextFSM 1.1.3 with ntc-templates 9.3.0 (PyPI): the public parsers of IOS and NX-OS CLI text, so
# labs/tests/textfsm.rs can parse netgw-lab's simulated outputs the way third-party tools do and compare
# them with the simulated device's state. scripts/peers/textfsm_parse.py is the entry point.
#
#   scripts/peers/textfsm.sh install     idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-textfsm
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"
VENV="$PEERS/venv-textfsm"

install() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv >/dev/null
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import ntc_templates.parse, textfsm' >/dev/null 2>&1; then
        echo "textfsm: already installed in $VENV"
        return 0
    fi
    mkdir -p "$PEERS"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check textfsm==1.1.3 ntc-templates==9.3.0
    "$VENV/bin/python" -c 'import ntc_templates.parse, textfsm' >/dev/null
    echo "textfsm: installed in $VENV"
}

case "${1:-}" in
install) install ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac
