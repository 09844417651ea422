#!/usr/bin/env bash
# repl_compare.sh: replication speed (issue 22) against redis-server, in
# paired rounds: every round runs each row against both pairs back to back,
# in an order that alternates between rounds.
#
#   full sync   a master holding KEYS keys (key:%012d, VALUE-byte values)
#               and a fresh, empty replica: the time from REPLICAOF to the
#               replica's master_link_status:up with DBSIZE = KEYS (polled
#               every ~10 ms). moond master -> moond replica against
#               redis-server -> redis-server. A new replica (empty data
#               directory) is started for every round.
#   SET -P 16   redis-benchmark SET of random keys below KEYS (overwrites),
#               50 clients, VALUE-byte values, SETS a run, on the master while
#               that replica is attached; the master's user and system CPU
#               per SET from /proc.
#
# Masters run on MASTER_CPU, replicas and the clients (redis-benchmark,
# bench/coldload for the load, redis-cli) on REPLICA_CPU. moond runs
# --shards 1 --appendonly no; redis-server --save '' --appendonly no, the
# master with repl-diskless-sync-delay 0 (7.0's default of 5 s would wait
# for more replicas; its full sync is otherwise the default diskless one).
#
# Knobs (environment): ROUNDS (7), KEYS (200000), VALUE (100), SETS
# (1000000), MASTER_CPU (0), REPLICA_CPU (1), SYNC_TIMEOUT (120 s),
# BENCH_MD (BENCHMARKS.md), SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-repl # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
KEYS=${KEYS:-200000}
VALUE=${VALUE:-100}
SETS=${SETS:-1000000}
MASTER_CPU=${MASTER_CPU:-0}
REPLICA_CPU=${REPLICA_CPU:-1}
SYNC_TIMEOUT=${SYNC_TIMEOUT:-120}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
COLDLOAD=${COLDLOAD:-$ROOT/bin/coldload}
MARK_START='<!-- bench-repl:start -->'
MARK_END='<!-- bench-repl:end -->'


if [ "${SKIP_BUILD:-0}" != 1 ]; then
	go build -o "$MOOND_BIN" ./cmd/moond
fi
go build -o "$COLDLOAD" ./bench/coldload
command -v redis-server >/dev/null || die "redis-server is missing (make apt-deps)"
command -v redis-benchmark >/dev/null || die "redis-benchmark is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-repl-bench.XXXXXX")
base=$((21000 + RANDOM % 8000))
# Servers: moond-m, moond-r (moond master, replica), redis-m, redis-r.
declare -A PID=() PORT=([moond-m]=$base [moond-r]=$((base + 1)) [redis-m]=$((base + 2)) [redis-r]=$((base + 3)))
cleanup() {
	for s in "${!PID[@]}"; do
		[ -n "${PID[$s]}" ] && kill -9 "${PID[$s]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

cli() { taskset -c "$REPLICA_CPU" redis-cli -p "${PORT[$1]}" "${@:2}"; }
info() { cli "$1" INFO "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }

# launch NAME CPU: a fresh server (empty data directory) on CPU.
launch() {
	local s=$1 cpu=$2
	rm -rf "${WORK:?}/$s" && mkdir -p "$WORK/$s"
	case $s in
	moond-*)
		taskset -c "$cpu" "$MOOND_BIN" --port "${PORT[$s]}" --dir "$WORK/$s" --shards 1 --appendonly no \
			>"$WORK/$s.log" 2>&1 &
		;;
	redis-m)
		taskset -c "$cpu" redis-server --port "${PORT[$s]}" --dir "$WORK/$s" --save '' --appendonly no \
			--repl-diskless-sync-delay 0 >"$WORK/$s.log" 2>&1 &
		;;
	redis-r)
		taskset -c "$cpu" redis-server --port "${PORT[$s]}" --dir "$WORK/$s" --save '' --appendonly no \
			>"$WORK/$s.log" 2>&1 &
		;;
	esac
	PID[$s]=$!
	await_ping "$s"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# fullsync S: a fresh replica S-r of S-m; sets SYNC_MS to the ms until it
# is up and holds every key. (Not in a subshell: PID must keep the replica.)
fullsync() {
	local s=$1 t0 t1 deadline
	stop "$s-r"
	launch "$s-r" "$REPLICA_CPU"
	t0=$(now_ms)
	cli "$s-r" REPLICAOF 127.0.0.1 "${PORT[$s-m]}" >/dev/null
	deadline=$((t0 + SYNC_TIMEOUT * 1000))
	while :; do
		if [ "$(info "$s-r" replication master_link_status)" = up ] &&
			[ "$(cli "$s-r" DBSIZE)" = "$KEYS" ]; then
			break
		fi
		[ "$(now_ms)" -lt "$deadline" ] || die "$s: the replica did not sync $KEYS keys in ${SYNC_TIMEOUT}s"
		sleep 0.01
	done
	t1=$(now_ms)
	SYNC_MS=$((t1 - t0))
}

# writes S: SETS SETs at -P 16 on S-m; prints "rate user_us sys_us" (master).
writes() {
	local s=$1 c0 c1 rate
	c0=$(cpu "$s-m")
	rate=$(taskset -c "$REPLICA_CPU" redis-benchmark -p "${PORT[$s-m]}" -t set -n "$SETS" -r "$KEYS" -d "$VALUE" \
		-P 16 -c 50 -q 2>/dev/null | tr '\r' '\n' | awk '/^SET: [0-9.]+ requests per second/ {r = $2} END {print r}')
	[ -n "$rate" ] || die "$s: redis-benchmark printed no rate"
	c1=$(cpu "$s-m")
	per_request "$rate" "$c0" "$c1" "$SETS"
}

for s in moond redis; do
	launch "$s-m" "$MASTER_CPU"
	r=$(taskset -c "$REPLICA_CPU" "$COLDLOAD" -addr "127.0.0.1:${PORT[$s-m]}" -mode load -keyspace "$KEYS" -value "$VALUE")
	[ "$(cli "$s-m" DBSIZE)" = "$KEYS" ] || die "$s: master holds $(cli "$s-m" DBSIZE) keys, not $KEYS"
	log "$s master loaded $KEYS keys ($r SET/s)"
	PID[$s-r]=""
done

declare -A MS=() RPS=() USR=() SYS=()
for round in $(seq "$ROUNDS"); do
	order=(moond redis)
	[ $((round % 2)) -eq 0 ] && order=(redis moond)
	for s in "${order[@]}"; do
		fullsync "$s"
		MS[$s]+="$SYNC_MS "
	done
	for s in "${order[@]}"; do
		read -r rps u sy < <(writes "$s")
		RPS[$s]+="$rps "
		USR[$s]+="$u "
		SYS[$s]+="$sy "
	done
	log "round $round of $ROUNDS done: sync ms moond $(echo "${MS[moond]}" | awk '{print $NF}') redis $(echo "${MS[redis]}" | awk '{print $NF}')"
done
# The replicas caught up with the writes? (DBSIZE stays KEYS: overwrites.)
declare -A LAG=()
for s in moond redis; do
	LAG[$s]=$(($(info "$s-m" replication master_repl_offset) - $(info "$s-r" replication slave_repl_offset)))
done

{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"other work running on the host; $ROUNDS paired rounds. moond --shards 1 --appendonly no (master and replica)" \
		"and redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2) --save '' --appendonly no (master with" \
		"--repl-diskless-sync-delay 0); masters on CPU $MASTER_CPU, replicas and clients (redis-benchmark, redis-cli) on CPU $REPLICA_CPU." \
		"$KEYS keys of $VALUE bytes on the master (issue 22 asks 1M keys; $KEYS to fit the time, \`KEYS=1000000\` for the full size);" \
		"$SETS SETs a run at -P 16, 50 clients, random keys below $KEYS. \`make bench-repl\`."
	echo
	echo "| row | moond | redis | moond/redis median | range | moond master user/sys µs/SET | redis master user/sys µs/SET |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	r=$(ratios "${MS[moond]}" "${MS[redis]}")
	printf "| full sync of %s keys, REPLICAOF to link up and DBSIZE equal: ms (lower is better) | %.0f | %.0f | %.2f | %.2f–%.2f | | |\n" \
		"$KEYS" "$(echo "${MS[moond]}" | median)" "$(echo "${MS[redis]}" | median)" \
		"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)"
	r=$(ratios "${RPS[moond]}" "${RPS[redis]}")
	printf "| SET -P 16 on a master with one replica: SET/s | %.0f | %.0f | %.2f | %.2f–%.2f | %.2f / %.2f | %.2f / %.2f |\n" \
		"$(echo "${RPS[moond]}" | median)" "$(echo "${RPS[redis]}" | median)" \
		"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
		"$(echo "${USR[moond]}" | median)" "$(echo "${SYS[moond]}" | median)" \
		"$(echo "${USR[redis]}" | median)" "$(echo "${SYS[redis]}" | median)"
	echo
	echo "Full sync ms per round: moond ${MS[moond]% }; redis ${MS[redis]% }. For the sync row the ratio is of times:" \
		"below 1 means moond synced faster. Replication offset the replica was behind its master after the last run:" \
		"moond ${LAG[moond]} bytes, redis ${LAG[redis]} bytes."
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Replication against redis-server (\`make bench-repl\`)"
log "wrote the bench-repl section of $BENCH_MD"
