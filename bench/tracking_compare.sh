#!/usr/bin/env bash
# tracking_compare.sh: CLIENT TRACKING and Pub/Sub fan-out (issue 18)
# against redis-server. moond --shards 1 and redis-server, both pinned to
# SERVER_CPU (the same-core method), the load generator (bench/psload) on
# CLIENT_CPU, in paired rounds: every round runs every row against both
# servers back to back, in an order that alternates between rounds. Per
# row: each server's median rate, the median and range of the per-round
# ratios moond/redis, and each server's user and system CPU per request
# (per GET; per delivered message), from /proc over the run.
#
#   GET with CLIENT TRACKING on, RESP3, -P 16, 50 clients, over KEYSPACE
#   keys of 64 bytes loaded first (no writes: no invalidations)
#   PUBLISH to one channel with 50 subscribers, the publisher at -P 16:
#   messages delivered per second
#
# Knobs (environment): ROUNDS (7), GETS (1000000), PUBLISHES (40000),
# CLIENTS (50), KEYSPACE (100000), SERVER_CPU (0), CLIENT_CPU (1),
# BENCH_MD (BENCHMARKS.md), SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-tracking # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
GETS=${GETS:-1000000}
PUBLISHES=${PUBLISHES:-40000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
PSLOAD=${PSLOAD:-$ROOT/bin/psload}
MARK_START='<!-- bench-tracking:start -->'
MARK_END='<!-- bench-tracking:end -->'


if [ "${SKIP_BUILD:-0}" != 1 ]; then
	go build -o "$MOOND_BIN" ./cmd/moond
fi
go build -o "$PSLOAD" ./bench/psload
command -v redis-server >/dev/null || die "redis-server is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-tracking-bench.XXXXXX")
pair_setup 1

ROWS=(track publish)
declare -A LABEL=([track]="GET, CLIENT TRACKING on (RESP3), -P 16" [publish]="PUBLISH to 1 channel, $CLIENTS subscribers: deliveries/s")

# load SERVER: KEYSPACE keys of 64 bytes, as the GETs name them.
load() {
	awk -v n="$KEYSPACE" 'BEGIN { v = sprintf("%064d", 7); for (i = 0; i < n; i++)
		printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$64\r\n%s\r\n", i, v }' |
		redis-cli -p "${PORT[$1]}" --pipe >/dev/null || die "$1: loading the keys failed"
}

# run SERVER ROW: prints "rate user_us sys_us".
run() {
	local c0 c1 rate n
	c0=$(cpu "$1")
	if [ "$2" = track ]; then
		n=$GETS
		rate=$(taskset -c "$CLIENT_CPU" "$PSLOAD" -addr "127.0.0.1:${PORT[$1]}" -kind track -n "$GETS" \
			-clients "$CLIENTS" -P 16 -keyspace "$KEYSPACE") || die "$1: psload track failed"
	else
		n=$((PUBLISHES * CLIENTS))
		rate=$(taskset -c "$CLIENT_CPU" "$PSLOAD" -addr "127.0.0.1:${PORT[$1]}" -kind publish -n "$PUBLISHES" \
			-clients "$CLIENTS" -P 16) || die "$1: psload publish failed"
	fi
	c1=$(cpu "$1")
	per_request "$rate" "$c0" "$c1" "$n"
}

declare -A RPS=() USR=() SYS=()
for s in moond redis; do
	start "$s"
	load "$s"
done
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
tracked=$(cli moond INFO stats | tr -d '\r' | awk -F: '/^tracking_total_keys:/ {print $2}')
stop moond
stop redis

{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"$ROUNDS paired rounds; moond --shards 1 --appendonly no and redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2)" \
		"--save '' --appendonly no, both on CPU $SERVER_CPU, bench/psload on CPU $CLIENT_CPU ($CLIENTS clients;" \
		"$GETS GETs of $KEYSPACE keys a run; $PUBLISHES PUBLISHes a run). moond's tracking table held $tracked keys at the end." \
		"\`make bench-tracking\`."
	echo
	echo "| row | moond rate | redis rate | moond/redis median | range | moond user/sys µs/req | redis user/sys µs/req |"
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
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Client-side caching and Pub/Sub against redis-server"
log "wrote the bench-tracking section of $BENCH_MD"
