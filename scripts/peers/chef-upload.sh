#!/usr/bin/env bash
# A third-party Chef client that uploads cookbooks the way `knife cookbook upload` does (sandbox,
# file PUTs, sandbox commit, cookbook version PUT), for tests/it/cookbook_sync.rs. knife is Ruby and not
# installable here, and PyChef 0.3.0 (the PyPI Chef client) no longer imports on Python 3.11
# (platform.linux_distribution is gone), so the client is scripts/peers/chef_upload.py: Python with
# requests 2.32.3 and cryptography 43.0.3 (PyPI, pinned), signing as mixlib-authentication 1.3.
#
#   scripts/peers/chef-upload.sh install   idempotent: python3-venv (apt, only when missing) and a venv
#                                          under .peers/venv-chef-upload
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-chef-upload"

install() {
    venv_install chef-upload "$VENV" 'import requests, cryptography' requests==2.32.3 cryptography==43.0.3
}

install_only_main "$@"
