#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz / libFuzzer) of every parser of device output and of every netgw
# input format. Targets (fuzz/fuzz_targets/, harnesses in fuzz/src/):
#
#   framing_eom framing_chunked rpc_reply   NETCONF: RFC 6242 framing in both modes, hello/rpc-reply
#   junos eos f5 ios nxos snmp              device output: Junos XML, EOS JSON + running-config, F5
#                                           iControl JSON, IOS / NX-OS CLI text (+ NX-OS `| json`), SNMP
#   repo inventory enc                      input: repo JSON/YAML, run-lists, VLAN lists, resources;
#                                           Nornir inventories; ENC YAML answers
#
#   scripts/fuzz.sh [RUNS] [TARGET...]     default: 10000000 runs of every target, one after the other
#   NETGW_FUZZ_SECONDS=600 scripts/fuzz.sh  the same, each target stopped after 600 s if not done
#
# Each target runs alone in one process (libFuzzer's default: one job, one worker; no -fork/-jobs),
# under `nice -n 10`, with -timeout=10 (a hang is a failure) and a per-format -max_len. Seeds come from
# the project's fixtures (fuzz/corpus-seeds/TARGET, read-only); the growing corpus is
# fuzz/corpus/TARGET. Final stats go to fuzz/artifacts-TARGET.log, one summary line per target to
# stdout. Crashes land in fuzz/artifacts/TARGET/; turn each into a regression unit test beside the
# parser (see docs/fuzzing.md). Reproduce one: fuzz/target/<host>/release/TARGET fuzz/artifacts/TARGET/crash-...
# (or `cargo fuzz run --sanitizer none --debug-assertions TARGET fuzz/artifacts/TARGET/crash-...`).
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly compiler; on a stable toolchain
# RUSTC_BOOTSTRAP=1 unlocks the flags cargo-fuzz passes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ALL=(framing_eom framing_chunked rpc_reply junos eos f5 ios nxos snmp repo inventory enc cookbook)
RUNS="${1:-10000000}"
shift || true
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=("${ALL[@]}")
case "$RUNS" in '' | *[!0-9]*) echo "RUNS must be a number, got $RUNS" >&2; exit 2 ;; esac

command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 1; }
# Works with the stable toolchain (RUSTC_BOOTSTRAP) or a nightly one (NETGW_FUZZ_TOOLCHAIN=nightly).
if [ -n "${NETGW_FUZZ_TOOLCHAIN:-}" ]; then
    FUZZ=(cargo "+$NETGW_FUZZ_TOOLCHAIN" fuzz)
else
    export RUSTC_BOOTSTRAP=1
    FUZZ=(cargo fuzz)
fi
# No sanitizer: the code under test is safe Rust (unsafe_code = "forbid"), so ASan adds cost, not
# findings; panics and arithmetic overflow (debug assertions) are what we look for.
BUILD=(--sanitizer none --debug-assertions)

max_len() {
    case " ${ALL[*]} " in *" $1 "*) ;; *) echo "unknown target $1 (known: ${ALL[*]})" >&2; return 1 ;; esac
    case "$1" in
        framing_eom | framing_chunked) echo 2048 ;;
        rpc_reply) echo 4096 ;;
        # Device output, repo documents, inventories, ENC answers: a few stanzas of real output fit in
        # 4 KiB (the parsers are line/element oriented); longer seeds (<= 16 KiB) are read truncated.
        # Per-exec cost grows with length (comparison tracing on every byte), so this is the trade-off
        # between depth and executions.
        *) echo 4096 ;;
    esac
}

cd "$ROOT/fuzz"
for t in "${TARGETS[@]}"; do max_len "$t" >/dev/null; done
# Build every target at once, then run the binaries: a campaign fuzzes one snapshot of the sources even
# if they change meanwhile.
# NETGW_FUZZ_SKIP_BUILD=1 reuses the last build.
[ -n "${NETGW_FUZZ_SKIP_BUILD:-}" ] || nice -n 10 "${FUZZ[@]}" build "${BUILD[@]}"
BIN="target/$(rustc -vV | sed -n 's/^host: //p')/release"
# NETGW_FUZZ_SECONDS caps each target's wall time (libFuzzer -max_total_time); unset: RUNS decides.
limit=()
[ -z "${NETGW_FUZZ_SECONDS:-}" ] || limit=(-max_total_time="$NETGW_FUZZ_SECONDS")
failed=()
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    seeds=()
    [ -d "corpus-seeds/$t" ] && seeds=("corpus-seeds/$t")
    echo "== $t: $RUNS runs (max_len $(max_len "$t"))"
    start=$(date +%s)
    rc=0
    nice -n 10 "$BIN/$t" -artifact_prefix="artifacts/$t/" \
        -runs="$RUNS" -max_len="$(max_len "$t")" -timeout=10 -print_final_stats=1 "${limit[@]}" \
        "corpus/$t" "${seeds[@]}" >"artifacts-$t.log" 2>&1 || rc=$?
    secs=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "artifacts-$t.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "artifacts-$t.log" | tail -1)
    if [ "$rc" -ne 0 ] || grep -qE 'ERROR: libFuzzer|panicked|deadly signal|SUMMARY' "artifacts-$t.log"; then
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' "artifacts-$t.log" | head -5 >&2 || true
        echo "== $t: FAILED after ${execs:-?} execs (see fuzz/artifacts/$t and fuzz/artifacts-$t.log)" >&2
        failed+=("$t")
    else
        echo "== $t: ok, ${execs:-?} execs, ${rate:-?} exec/s, ${secs}s wall"
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
