#!/usr/bin/env bash
# A third-party Chef client that uploads cookbooks the way `knife cookbook upload` does (sandbox,
# file PUTs, sandbox commit, cookbook version PUT), for tests/cookbook_sync.rs. knife is Ruby and not
# installable here, and PyChef 0.3.0 (the PyPI Chef client) no longer imports on Python 3.11
# (platform.linux_distribution is gone), so the client is scripts/peers/chef_upload.py: Python with
# requests 2.32.3 and cryptography 43.0.3 (PyPI, pinned), signing as mixlib-authentication 1.3.
#
#   scripts/peers/chef-upload.sh install   idempotent: python3-venv (apt, only when missing) and a venv
#                                          under .peers/venv-chef-upload
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"
VENV="$PEERS/venv-chef-upload"

install() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv >/dev/null
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import requests, cryptography' >/dev/null 2>&1; then
        echo "chef-upload: already installed in $VENV"
        return 0
    fi
    mkdir -p "$PEERS"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check requests==2.32.3 cryptography==43.0.3
    "$VENV/bin/python" -c 'import requests, cryptography' >/dev/null
    echo "chef-upload: installed in $VENV"
}

case "${1:-}" in
install) install ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac
