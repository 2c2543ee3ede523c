#!/usr/bin/env bash
# nornir 3.5.0 (PyPI): Nornir itself, so tests/it/nornir_parity.rs can load the same inventory files with
# Nornir's SimpleInventory and compare every resolved host with netgw's resolution.
#
#   scripts/peers/nornir.sh install     idempotent: python3-venv (apt, only when missing) and a venv
#                                       under .peers/venv-nornir
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-nornir"

install() {
    venv_install nornir "$VENV" 'import nornir' nornir==3.5.0
}

install_only_main "$@"
