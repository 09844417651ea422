#!/usr/bin/env bash
# ab_compare.sh OLD_BIN NEW_BIN: two moond binaries side by side, in paired
# rounds, to show what a change did to throughput. Both servers run at once
# on CPU 0 (SERVER_CPU), each with its own data directory, and take turns:
# every round runs every row against both, back to back, in an order that
# alternates between rounds so that drift falls on both. redis-benchmark
# runs on CPU 1 (CLIENT_CPU). The report gives, per row, each binary's
# median requests/s, the median and range of the per-round ratios NEW/OLD,
# and each server's CPU time (user + system) per request.
#
# Knobs (environment): ROUNDS (default 7), REQUESTS (-P 1 rows, default
# 200000), REQUESTS_PIPELINED (-P 16 rows, default 1000000), CLIENTS (50),
# KEYSPACE (-r, 100000), ONLY (an extended regular expression: only the
# rows it matches, e.g. "MSET"), EXTRA_ARGS (more moond flags for both, e.g.
# "--appendonly no"), SERVER_CPU, CLIENT_CPU.
set -euo pipefail

OLD=${1:?usage: ab_compare.sh OLD_BIN NEW_BIN}
NEW=${2:?usage: ab_compare.sh OLD_BIN NEW_BIN}
ROUNDS=${ROUNDS:-7}
REQUESTS=${REQUESTS:-200000}
REQUESTS_PIPELINED=${REQUESTS_PIPELINED:-1000000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
EXTRA_ARGS=${EXTRA_ARGS:-}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TICK=$(getconf CLK_TCK)

WORK=$(mktemp -d)
declare -A PID=() PORT=([old]=7301 [new]=7302) BIN=([old]=$OLD [new]=$NEW)
cleanup() {
	for s in old new; do
		[ -n "${PID[$s]:-}" ] && kill "${PID[$s]}" 2>/dev/null && wait "${PID[$s]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

start() {
	local s=$1
	mkdir -p "$WORK/$s"
	# shellcheck disable=SC2086
	taskset -c "$SERVER_CPU" "${BIN[$s]}" --port "${PORT[$s]}" --dir "$WORK/$s" --shards 1 $EXTRA_ARGS \
		>"$WORK/$s.log" 2>&1 &
	PID[$s]=$!
	for _ in $(seq 100); do
		redis-cli -p "${PORT[$s]}" ping >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "$s did not start:" >&2
	cat "$WORK/$s.log" >&2
	exit 1
}

# cpu_ticks PID: user + system CPU ticks of the process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

ROWS=("GET -P 1" "GET -P 16" "SET -P 1" "SET -P 16" "MSET -P 1" "MSET -P 16" "INCR -P 1" "INCR -P 16")
if [ -n "${ONLY:-}" ]; then
	mapfile -t ROWS < <(printf '%s\n' "${ROWS[@]}" | grep -E "$ONLY")
fi

# run SERVER ROW: one redis-benchmark run; prints "rps cpu_us_per_req".
run() {
	local s=$1 row=$2 cmd p n
	cmd=$(echo "$row" | awk '{print tolower($1)}')
	p=${row##* }
	n=$REQUESTS
	[ "$p" -gt 1 ] && n=$REQUESTS_PIPELINED
	local t0 t1 out rps
	t0=$(cpu_ticks "${PID[$s]}")
	out=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "${PORT[$s]}" -c "$CLIENTS" -n "$n" -P "$p" -r "$KEYSPACE" \
		-t "$cmd" --csv -q 2>/dev/null | tail -1)
	t1=$(cpu_ticks "${PID[$s]}")
	rps=$(echo "$out" | awk -F'","' '{gsub(/"/, "", $2); print $2}')
	awk -v r="$rps" -v d=$((t1 - t0)) -v hz="$TICK" -v n="$n" 'BEGIN {printf "%s %.3f\n", r, d / hz * 1e6 / n}'
}

start old
start new
declare -A RPS=() CPU=()
for round in $(seq "$ROUNDS"); do
	order=(old new)
	[ $((round % 2)) -eq 0 ] && order=(new old)
	for row in "${ROWS[@]}"; do
		for s in "${order[@]}"; do
			read -r rps cpu < <(run "$s" "$row")
			RPS[$s,$row]+="$rps "
			CPU[$s,$row]+="$cpu "
		done
	done
	echo "round $round of $ROUNDS done" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "| row | old rps (median) | new rps (median) | new/old median | new/old range | old CPU µs/req | new CPU µs/req |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for row in "${ROWS[@]}"; do
	read -ra o <<<"${RPS[old,$row]}"
	read -ra n <<<"${RPS[new,$row]}"
	ratios=""
	for i in "${!o[@]}"; do
		ratios+=$(awk -v a="${o[$i]}" -v b="${n[$i]}" 'BEGIN {printf "%.4f ", b / a}')
	done
	med=$(echo "$ratios" | median)
	lo=$(echo "$ratios" | tr ' ' '\n' | grep -v '^$' | sort -g | head -1)
	hi=$(echo "$ratios" | tr ' ' '\n' | grep -v '^$' | sort -g | tail -1)
	printf "| %s | %.0f | %.0f | %.3f | %.3f–%.3f | %.2f | %.2f |\n" "$row" \
		"$(echo "${RPS[old,$row]}" | median)" "$(echo "${RPS[new,$row]}" | median)" "$med" "$lo" "$hi" \
		"$(echo "${CPU[old,$row]}" | median)" "$(echo "${CPU[new,$row]}" | median)"
done
