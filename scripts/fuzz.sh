#!/usr/bin/env bash
# Fuzz the NETCONF transport (cargo-fuzz / libFuzzer): RFC 6242 framing decoder in both modes and the
# hello/rpc-reply parser. The fuzz crate (fuzz/) compiles drivers/src/transport/netconf/{error,codec,
# reply,ops}.rs on their own.
#
#   scripts/fuzz.sh [RUNS] [TARGET...]     default: 10000000 runs of framing_eom framing_chunked rpc_reply
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly compiler; on a stable toolchain
# RUSTC_BOOTSTRAP=1 unlocks the flags cargo-fuzz passes. Crashes land in fuzz/artifacts/TARGET/; turn
# each into a regression unit test beside the code.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10000000}"
shift || true
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=(framing_eom framing_chunked rpc_reply)

command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 1; }
# Works with the stable toolchain (RUSTC_BOOTSTRAP) or a nightly one (NETGW_FUZZ_TOOLCHAIN=nightly).
if [ -n "${NETGW_FUZZ_TOOLCHAIN:-}" ]; then
    FUZZ=(cargo "+$NETGW_FUZZ_TOOLCHAIN" fuzz)
else
    export RUSTC_BOOTSTRAP=1
    FUZZ=(cargo fuzz)
fi

cd "$ROOT/fuzz"
seed() {
    local target="$1" dir="corpus/$1"
    mkdir -p "$dir"
    [ -z "$(ls -A "$dir")" ] || return 0
    case "$target" in
        rpc_reply)
            find "$ROOT/drivers/tests/fixtures/netconf" -name '*.xml' -size -16k -exec cp {} "$dir/" \;
            ;;
        framing_eom)
            printf '\x05<hello/>]]>]]>\n<rpc-reply><ok/></rpc-reply>]]>]]>' >"$dir/two-messages"
            ;;
        framing_chunked)
            printf '\x03\n#4\n<rpc\n#18\n message-id="102"\n\n##\n\n#5\nhello\n##\n' >"$dir/rfc6242"
            ;;
    esac
}
for t in "${TARGETS[@]}"; do
    seed "$t"
    echo "== $t: $RUNS runs"
    # No sanitizer: the code under test is safe Rust (unsafe_code = "forbid"), so ASan adds cost, not
    # findings; panics and arithmetic overflow (debug assertions) are what we look for.
    case "$t" in rpc_reply) max_len=4096 ;; *) max_len=2048 ;; esac
    "${FUZZ[@]}" run --sanitizer none --debug-assertions "$t" "corpus/$t" -- \
        -runs="$RUNS" -max_len="$max_len" -print_final_stats=1 2>&1 \
        | tee "artifacts-$t.log" | grep -E 'stat::number_of_executed_units|Done|ERROR|panicked|SUMMARY' || true
    if grep -qE 'ERROR: libFuzzer|panicked' "artifacts-$t.log"; then
        echo "== $t: CRASH (see fuzz/artifacts/$t and fuzz/artifacts-$t.log)" >&2
        exit 1
    fi
done
