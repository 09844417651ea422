#!/usr/bin/env bash
# gcfloor_compare.sh OLD_BIN NEW_BIN: two moond binaries in paired rounds
# on the loads whose live heap is small (where gc-heap-floor matters):
# SET, GET, HSET and LPUSH at -P 16 on one shard, and bench/txload's MSET
# over two shards. Every server runs at once on SERVER_CPU (--appendonly
# no), the load generators on CLIENT_CPU; each round runs every row
# against both binaries back to back, the order alternating between
# rounds. Reports each row's median rate, the median and range of the
# per-round ratios NEW/OLD, and each server's user and system CPU µs per
# request (medians); then each server's RSS and used_memory at the end.
#
# Knobs (environment): ROUNDS (7), REQUESTS (redis-benchmark rows,
# 1000000), TXNS (txload row, 100000), CLIENTS (50), KEYSPACE (-r, 100000),
# EXTRA_ARGS (more moond flags for both), SERVER_CPU (0), CLIENT_CPU (1).
set -euo pipefail

OLD=${1:?usage: gcfloor_compare.sh OLD_BIN NEW_BIN}
NEW=${2:?usage: gcfloor_compare.sh OLD_BIN NEW_BIN}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh" # median, lo, hi, ratios, per_request, cpu
ROUNDS=${ROUNDS:-7}
REQUESTS=${REQUESTS:-1000000}
TXNS=${TXNS:-100000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
EXTRA_ARGS=${EXTRA_ARGS:-}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TICK=$(getconf CLK_TCK)

WORK=$(mktemp -d)
TXLOAD=$WORK/txload
(cd "$ROOT" && go build -o "$TXLOAD" ./bench/txload)
# Servers: old1/new1 with one shard, old2/new2 with two (the txload row).
declare -A PID=() PORT=([old1]=7411 [new1]=7412 [old2]=7413 [new2]=7414)
declare -A BIN=([old1]=$OLD [new1]=$NEW [old2]=$OLD [new2]=$NEW)
cleanup() {
	for s in "${!PID[@]}"; do
		kill "${PID[$s]}" 2>/dev/null && wait "${PID[$s]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

start() {
	local s=$1 shards=${1: -1}
	mkdir -p "$WORK/$s"
	# shellcheck disable=SC2086
	taskset -c "$SERVER_CPU" "${BIN[$s]}" --port "${PORT[$s]}" --dir "$WORK/$s" --shards "$shards" \
		--appendonly no $EXTRA_ARGS >"$WORK/$s.log" 2>&1 &
	PID[$s]=$!
	for _ in $(seq 100); do
		redis-cli -p "${PORT[$s]}" ping 2>/dev/null | grep -q PONG && return
		sleep 0.1
	done
	echo "$s did not start:" >&2
	cat "$WORK/$s.log" >&2
	exit 1
}

ROWS=("SET -P 16" "GET -P 16" "HSET -P 16" "LPUSH -P 16" "MSET txn over 2 shards")
row_args() {
	case ${1%% *} in
	SET) echo "-t set -d 64" ;;
	GET) echo "-t get -d 64" ;;
	HSET) echo "-t hset" ;;
	LPUSH) echo "LPUSH mylist xxx" ;;
	esac
}

# run BIN ROW (BIN old or new): prints "rate user_us sys_us".
run() {
	local s=$1 row=$2 c0 c1 rate n=$REQUESTS
	if [ "${row%% *}" = MSET ]; then
		s=${s}2 n=$TXNS
		c0=$(cpu "$s")
		rate=$(taskset -c "$CLIENT_CPU" "$TXLOAD" -addr "127.0.0.1:${PORT[$s]}" -kind mset -n "$n" \
			-clients "$CLIENTS" -keyspace 10000)
	else
		s=${s}1
		# Each LPUSH run starts from an empty list, as types_compare's RPOP rows leave it.
		[ "${row%% *}" = LPUSH ] && redis-cli -p "${PORT[$s]}" del mylist >/dev/null
		c0=$(cpu "$s")
		# shellcheck disable=SC2046
		rate=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "${PORT[$s]}" -c "$CLIENTS" -n "$n" -P 16 \
			-r "$KEYSPACE" --csv -q $(row_args "$row") 2>/dev/null | tail -1 |
			awk -F'","' '{gsub(/"/, "", $2); print $2}')
	fi
	c1=$(cpu "$s")
	per_request "$rate" "$c0" "$c1" "$n"
}

for s in old1 new1 old2 new2; do start "$s"; done
declare -A RATE=() USR=() SYS=()
for round in $(seq "$ROUNDS"); do
	order=(old new)
	[ $((round % 2)) -eq 0 ] && order=(new old)
	for row in "${ROWS[@]}"; do
		for s in "${order[@]}"; do
			read -r rate u sy < <(run "$s" "$row")
			RATE[$s,$row]+="$rate " USR[$s,$row]+="$u " SYS[$s,$row]+="$sy "
		done
	done
	echo "round $round of $ROUNDS done" >&2
done

echo "| row | old rate | new rate | new/old median | range | old user/sys µs/req | new user/sys µs/req | user ranges old; new |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for row in "${ROWS[@]}"; do
	r=$(ratios "${RATE[new,$row]}" "${RATE[old,$row]}")
	span() { local l=$1; echo "$(echo "$l" | lo)-$(echo "$l" | hi)"; }
	printf "| %s | %.0f | %.0f | %.2f | %s | %.2f / %.2f | %.2f / %.2f | %s; %s |\n" "$row" \
		"$(echo "${RATE[old,$row]}" | median)" "$(echo "${RATE[new,$row]}" | median)" \
		"$(echo "$r" | median)" "$(span "$r")" \
		"$(echo "${USR[old,$row]}" | median)" "$(echo "${SYS[old,$row]}" | median)" \
		"$(echo "${USR[new,$row]}" | median)" "$(echo "${SYS[new,$row]}" | median)" \
		"$(span "${USR[old,$row]}")" "$(span "${USR[new,$row]}")"
done
echo
for s in old1 new1 old2 new2; do
	used() { redis-cli -p "${PORT[$s]}" info memory | awk -F: '/^used_memory:/ {printf "%.1f", $2 / 1048576}'; }
	rss() { ps -o rss= -p "${PID[$s]}" | awk '{printf "%.1f", $1 / 1024}'; }
	before=$(used) rss_before=$(rss)
	redis-cli -p "${PORT[$s]}" memory purge >/dev/null
	printf "%s: RSS %s MiB, used_memory %s MiB; after MEMORY PURGE: RSS %s MiB, used_memory %s MiB; keys %s\n" \
		"$s" "$rss_before" "$before" "$(rss)" "$(used)" "$(redis-cli -p "${PORT[$s]}" dbsize)"
done
