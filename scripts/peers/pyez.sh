#!/usr/bin/env bash
# junos-eznc 2.8.2 (PyPI, Juniper's PyEZ, Apache-2.0): Juniper's own NETCONF client, its facts and its
# operational tables (PhyPortTable, LLDPNeighborTable, LacpPortTable), so labs/tests/it/lab.rs and
# tests/it/lag_facts.rs can read netgw-lab's Junos simulator as Juniper's tools do and compare with the
# simulated state. scripts/peers/pyez_read.py is the
# entry point.
#
#   scripts/peers/pyez.sh install        idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-pyez
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-pyez"

install() {
    venv_install junos-eznc "$VENV" 'import jnpr.junos' junos-eznc==2.8.2
}

install_only_main "$@"
