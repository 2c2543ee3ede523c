#!/usr/bin/env bash
# bigrest 1.7.3 (PyPI): an iControl REST client for F5 BIG-IP, so tests/it/lag.rs can read what netgw
# configured on netgw-lab's BIG-IPs (trunks, VLANs, self IPs) as F5's users do and compare it with the
# declaration. scripts/peers/bigrest_read.py is the entry point. bigrest declares no dependencies; it
# imports requests.
#
#   scripts/peers/bigrest.sh install     idempotent: python3-venv (apt, only when missing) and a venv
#                                        under .peers/venv-bigrest
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-bigrest"

install() {
    venv_install bigrest "$VENV" 'import bigrest.bigip, requests' bigrest==1.7.3 requests==2.34.2
}

install_only_main "$@"
