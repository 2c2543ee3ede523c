#!/usr/bin/env bash
# pyeapi 1.0.4 (PyPI): Arista's own eAPI client and its configuration parsers (api.vlans, api.switchports,
# api.interfaces read `show running-config all`), so labs/tests/it/lab.rs can read netgw-lab's EOS simulator
# as Arista's tools do and compare with the simulated state. scripts/peers/pyeapi_read.py is the entry point.
#
#   scripts/peers/pyeapi.sh install      idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-pyeapi
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-pyeapi"

install() {
    venv_install pyeapi "$VENV" 'import pyeapi' pyeapi==1.0.4
}

install_only_main "$@"
