#!/usr/bin/env bash
# evict_compare.sh: SET while evicting (issue 19) against redis-server.
# moond --shards 1 and redis-server, both with the same --maxmemory and
# --maxmemory-policy allkeys-lru, both pinned to SERVER_CPU (the same-core
# method), redis-benchmark on CLIENT_CPU, in paired rounds: every round
# runs the row against both servers back to back, in an order that
# alternates between rounds. Before the rounds each server is filled past
# its limit once, so that every measured SET of a new key evicts.
#
#   SET -P 16, 50 clients, random keys of KEYSPACE, VALUE-byte values
#
# Per row: each server's median rate, the median and range of the
# per-round ratios moond/redis, each server's user and system CPU per
# SET (from /proc over the run), and at the end each server's RSS and
# evicted_keys.
#
# Knobs (environment): ROUNDS (7), SETS (1000000), KEYSPACE (1000000),
# VALUE (100), MAXMEMORY (100mb: about half of what 1M keys of 100 bytes
# take in redis-server), SERVER_CPU (0), CLIENT_CPU (1), BENCH_MD
# (BENCHMARKS.md), SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-evict # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
SETS=${SETS:-1000000}
KEYSPACE=${KEYSPACE:-1000000}
VALUE=${VALUE:-100}
MAXMEMORY=${MAXMEMORY:-100mb}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
MARK_START='<!-- bench-evict:start -->'
MARK_END='<!-- bench-evict:end -->'


if [ "${SKIP_BUILD:-0}" != 1 ]; then
	go build -o "$MOOND_BIN" ./cmd/moond
fi
command -v redis-server >/dev/null || die "redis-server is missing (make apt-deps)"
command -v redis-benchmark >/dev/null || die "redis-benchmark is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-evict-bench.XXXXXX")
PAIR_ARGS=(--maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru)
pair_setup 1

# sets SERVER N: N SETs at -P 16; prints the rate.
sets() {
	taskset -c "$CLIENT_CPU" redis-benchmark -p "${PORT[$1]}" -t set -n "$2" -r "$KEYSPACE" -d "$VALUE" \
		-P 16 -c 50 -q 2>/dev/null | tr '\r' '\n' | awk '/^SET: [0-9.]+ requests per second/ {r = $2} END {print r}'
}

# run SERVER: prints "rate user_us sys_us".
run() {
	local c0 c1 rate
	c0=$(cpu "$1")
	rate=$(sets "$1" "$SETS")
	[ -n "$rate" ] || die "$1: redis-benchmark printed no rate"
	c1=$(cpu "$1")
	per_request "$rate" "$c0" "$c1" "$SETS"
}

info() { cli "$1" INFO "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }

declare -A RPS=() USR=() SYS=()
for s in moond redis; do
	start "$s"
	sets "$s" "$((2 * KEYSPACE))" >/dev/null
	[ "$(info "$s" stats evicted_keys)" -gt 0 ] || die "$s: nothing evicted while filling; raise KEYSPACE or lower MAXMEMORY"
done
for round in $(seq "$ROUNDS"); do
	order=(moond redis)
	[ $((round % 2)) -eq 0 ] && order=(redis moond)
	for s in "${order[@]}"; do
		read -r rps u sy < <(run "$s")
		RPS[$s]+="$rps "
		USR[$s]+="$u "
		SYS[$s]+="$sy "
	done
	log "round $round of $ROUNDS done"
done
declare -A RSS=() EVICTED=() KEYS=()
for s in moond redis; do
	RSS[$s]=$(awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/${PID[$s]}/status")
	EVICTED[$s]=$(info "$s" stats evicted_keys)
	KEYS[$s]=$(cli "$s" DBSIZE)
	stop "$s"
done

{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"$ROUNDS paired rounds; moond --shards 1 --appendonly no and redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2)" \
		"--save '' --appendonly no, both --maxmemory $MAXMEMORY --maxmemory-policy allkeys-lru, on CPU $SERVER_CPU;" \
		"redis-benchmark on CPU $CLIENT_CPU ($SETS SETs a run, 50 clients, random keys of $KEYSPACE, $VALUE-byte values)." \
		"\`make bench-evict\`."
	echo
	echo "| row | moond SET/s | redis SET/s | moond/redis median | range | moond user/sys µs/SET | redis user/sys µs/SET |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	r=$(ratios "${RPS[moond]}" "${RPS[redis]}")
	printf "| SET -P 16 while evicting | %.0f | %.0f | %.2f | %.2f–%.2f | %.2f / %.2f | %.2f / %.2f |\n" \
		"$(echo "${RPS[moond]}" | median)" "$(echo "${RPS[redis]}" | median)" \
		"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
		"$(echo "${USR[moond]}" | median)" "$(echo "${SYS[moond]}" | median)" \
		"$(echo "${USR[redis]}" | median)" "$(echo "${SYS[redis]}" | median)"
	echo
	echo "At the end: RSS moond ${RSS[moond]} MB, redis ${RSS[redis]} MB (maxmemory $MAXMEMORY);" \
		"keys held moond ${KEYS[moond]}, redis ${KEYS[redis]}; evicted_keys moond ${EVICTED[moond]}, redis ${EVICTED[redis]}."
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "SET while evicting against redis-server"
log "wrote the bench-evict section of $BENCH_MD"
