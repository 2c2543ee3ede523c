#!/usr/bin/env bash
# NAPALM 5.2.0 (PyPI) with the clients its drivers use: netmiko + ntc-templates (ios, nxos_ssh),
# junos-eznc (junos, PyEZ over NETCONF), pyeapi (eos over eAPI). tests/it/lag.rs reads what netgw
# configured on netgw-lab with them and compares it with the declaration; scripts/peers/napalm_read.py
# is the entry point.
#
#   scripts/peers/napalm.sh install      idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-napalm
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-napalm"

install() {
    venv_install napalm "$VENV" 'import napalm, netmiko, ntc_templates, jnpr.junos, pyeapi' \
        napalm==5.2.0 netmiko==4.8.0 ntc_templates==9.3.0 junos-eznc==2.8.2 pyeapi==1.0.4
}

install_only_main "$@"
