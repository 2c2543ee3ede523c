#!/usr/bin/env bash
# Chef's own node-attribute code as the oracle for netgw's static evaluation of Ruby attribute files
# (tests/it/chef_attrs.rs). The Chef gem is not packaged for Debian; its attribute code (Apache-2.0) is
# vendored in scripts/peers/chef-attrs/ (SOURCE names the commit and the files) and runs on Debian's
# ruby. netgw itself never runs Ruby.
#
#   scripts/peers/chef-attrs.sh install   idempotent: apt-get install ruby when missing, then a smoke
#                                         run of the oracle
#   scripts/peers/chef-attrs.sh run       the oracle: request JSON on stdin, attributes JSON on stdout
#                                         (format: the top of chef-attrs/chef_attrs.rb)
#   scripts/peers/chef-attrs.sh encrypt VERSION SECRET_FILE
#                                         Chef's encryptor: a data bag item JSON on stdin, encrypted
#                                         as knife does (format VERSION 1, 2 or 3) on stdout
#   scripts/peers/chef-attrs.sh roles role|environment FILE...
#                                         Chef's Role/Environment#from_file: each file's to_h, JSON
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$ROOT/scripts/peers"

install() {
    command -v ruby >/dev/null 2>&1 || apt_install ruby
    local out
    out="$(echo '{"root": "/nonexistent", "run_list": []}' | ruby "$HERE/chef-attrs/chef_attrs.rb")"
    case "$out" in
    *'"merged":{}'*) echo "chef-attrs: ready ($(ruby -e 'print RUBY_VERSION'), Chef attribute code from $(sed -n 's/^Commit: *//p' "$HERE/chef-attrs/SOURCE"))" ;;
    *)
        echo "chef-attrs: smoke run failed: $out" >&2
        exit 1
        ;;
    esac
}

case "${1:-}" in
install) install ;;
run)
    command -v ruby >/dev/null 2>&1 || {
        echo "PEER MISSING: ruby is not installed; run scripts/peers/chef-attrs.sh install" >&2
        exit 3
    }
    exec ruby "$HERE/chef-attrs/chef_attrs.rb"
    ;;
encrypt)
    command -v ruby >/dev/null 2>&1 || {
        echo "PEER MISSING: ruby is not installed; run scripts/peers/chef-attrs.sh install" >&2
        exit 3
    }
    exec ruby "$HERE/chef-attrs/chef_encrypt.rb" "$2" "$3"
    ;;
roles)
    command -v ruby >/dev/null 2>&1 || {
        echo "PEER MISSING: ruby is not installed; run scripts/peers/chef-attrs.sh install" >&2
        exit 3
    }
    exec ruby "$HERE/chef-attrs/chef_roles.rb" "${@:2}"
    ;;
*)
    echo "usage: $0 install|run|encrypt VERSION SECRET_FILE|roles role|environment FILE..." >&2
    exit 2
    ;;
esac
