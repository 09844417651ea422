#!/usr/bin/env bash
# txn_compare.sh: transactions and multi-key commands whose keys live on
# two shards (issue 17), against redis-server. moond --shards 2 and
# redis-server, both pinned to SERVER_CPU (the same-core method: moond's
# two shard threads share it), the load generator (bench/txload) on
# CLIENT_CPU, in paired rounds: every round runs every row against both
# servers back to back, in an order that alternates between rounds. Per
# row: each server's median transactions/s, the median and range of the
# per-round ratios moond/redis, and each server's user and system CPU per
# transaction (from /proc, over the run).
#
#   MSET of 10 keys, 5 on each shard, -P 1
#   MULTI; SET a; INCR b; EXEC, a and b on different shards, -P 1
#
# Knobs (environment): ROUNDS (7), TXNS (100000), CLIENTS (50), KEYSPACE
# (10000 names per shard), SERVER_CPU (0), CLIENT_CPU (1), BENCH_MD
# (BENCHMARKS.md), SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-txn # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
TXNS=${TXNS:-100000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-10000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
TXLOAD=${TXLOAD:-$ROOT/bin/txload}
MARK_START='<!-- bench-txn:start -->'
MARK_END='<!-- bench-txn:end -->'


if [ "${SKIP_BUILD:-0}" != 1 ]; then
	go build -o "$MOOND_BIN" ./cmd/moond
	go build -o "$TXLOAD" ./bench/txload
fi
command -v redis-server >/dev/null || die "redis-server is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-txn-bench.XXXXXX")
pair_setup 2

ROWS=(mset multi)
declare -A LABEL=([mset]="MSET of 10 keys over 2 shards, -P 1" [multi]="MULTI SET INCR EXEC over 2 shards, -P 1")

# run SERVER ROW: prints "txns/s user_us sys_us".
run() {
	local c0 c1 rate
	c0=$(cpu "$1")
	rate=$(taskset -c "$CLIENT_CPU" "$TXLOAD" -addr "127.0.0.1:${PORT[$1]}" -kind "$2" -n "$TXNS" \
		-clients "$CLIENTS" -keyspace "$KEYSPACE") || die "$1: txload $2 failed"
	c1=$(cpu "$1")
	per_request "$rate" "$c0" "$c1" "$TXNS"
}

declare -A RPS=() USR=() SYS=()
start moond
start redis
for round in $(seq "$ROUNDS"); do
	order=(moond redis)
	[ $((round % 2)) -eq 0 ] && order=(redis moond)
	for row in "${ROWS[@]}"; do
		for s in "${order[@]}"; do
			read -r rps u sy < <(run "$s" "$row")
			RPS[$s,$row]+="$rps "
			USR[$s,$row]+="$u "
			SYS[$s,$row]+="$sy "
		done
	done
	log "round $round of $ROUNDS done"
done
stop moond
stop redis

{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"$ROUNDS paired rounds; moond --shards 2 --appendonly no and redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2)" \
		"--save '' --appendonly no, both on CPU $SERVER_CPU, bench/txload on CPU $CLIENT_CPU" \
		"($CLIENTS clients, $TXNS transactions a run, every transaction's keys on both of moond's shards). \`make bench-txn\`."
	echo
	echo "| row | moond txn/s | redis txn/s | moond/redis median | range | moond user/sys µs/txn | redis user/sys µs/txn |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for row in "${ROWS[@]}"; do
		r=$(ratios "${RPS[moond,$row]}" "${RPS[redis,$row]}")
		printf "| %s | %.0f | %.0f | %.2f | %.2f–%.2f | %.2f / %.2f | %.2f / %.2f |\n" "${LABEL[$row]}" \
			"$(echo "${RPS[moond,$row]}" | median)" "$(echo "${RPS[redis,$row]}" | median)" \
			"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
			"$(echo "${USR[moond,$row]}" | median)" "$(echo "${SYS[moond,$row]}" | median)" \
			"$(echo "${USR[redis,$row]}" | median)" "$(echo "${SYS[redis,$row]}" | median)"
	done
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Transactions across shards against redis-server"
log "wrote the bench-txn section of $BENCH_MD"
