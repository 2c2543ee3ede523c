#!/usr/bin/env bash
# ansible-core 2.17.14 (PyPI): Ansible's own host-pattern evaluation, so tests/it/selection.rs can
# compare netgw's selection language with `ansible --list-hosts --limit` on the same inventory.
#
#   scripts/peers/ansible.sh install    idempotent: python3-venv (apt, only when missing) and a venv
#                                       under .peers/venv-ansible
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-ansible"

install() {
    venv_install ansible-core "$VENV" 'import ansible.inventory.manager' ansible-core==2.17.14
}

install_only_main "$@"
