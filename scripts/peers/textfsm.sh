#!/usr/bin/env bash
# TextFSM 1.1.3 with ntc-templates 9.3.0 (PyPI): the public parsers of IOS and NX-OS CLI text, so
# labs/tests/textfsm.rs can parse netgw-lab's simulated outputs the way third-party tools do and compare
# them with the simulated device's state. scripts/peers/textfsm_parse.py is the entry point.
#
#   scripts/peers/textfsm.sh install     idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-textfsm
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-textfsm"

install() {
    venv_install textfsm "$VENV" 'import ntc_templates.parse, textfsm' textfsm==1.1.3 ntc-templates==9.3.0
}

install_only_main "$@"
