#!/usr/bin/env bash
# junos-eznc 2.8.2 (PyPI, Juniper's PyEZ, Apache-2.0): Juniper's own NETCONF client, its facts and its
# operational tables (PhyPortTable, LLDPNeighborTable), so labs/tests/lab.rs can read netgw-lab's Junos
# simulator as Juniper's tools do and compare with the simulated state. scripts/peers/pyez_read.py is the
# entry point.
#
#   scripts/peers/pyez.sh install        idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-pyez
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"
VENV="$PEERS/venv-pyez"

install() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv >/dev/null
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import jnpr.junos' >/dev/null 2>&1; then
        echo "junos-eznc: already installed in $VENV"
        return 0
    fi
    mkdir -p "$PEERS"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check junos-eznc==2.8.2
    "$VENV/bin/python" -c 'import jnpr.junos' >/dev/null
    echo "junos-eznc: installed in $VENV"
}

case "${1:-}" in
install) install ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac
