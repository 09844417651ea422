#!/usr/bin/env bash
# types_compare.sh: the data-type rows of make bench-redis. moond (one
# shard) and redis-server, both pinned to SERVER_CPU, redis-benchmark on
# CLIENT_CPU, in paired rounds: every round runs every row against both
# servers back to back, in an order that alternates between rounds, so that
# the host's drift falls on both. Per row: each server's median requests/s,
# the median and range of the per-round ratios moond/redis, and each
# server's user and system CPU time per request (from /proc, over the row).
#
#   1. Throughput: HSET and HGET on one hash of KEYSPACE fields, SADD and
#      SISMEMBER on one set of KEYSPACE members (redis-benchmark's own hset
#      and sadd tests; HGET and SISMEMBER as custom commands on the same
#      keys), LPUSH and RPOP on one list (custom commands; before each RPOP
#      run the list is topped up, untimed, to hold at least the pops to
#      come), ZADD of random scores to one zset of KEYSPACE members and
#      ZRANGE 0 9 of a zset of 1,000 members (custom commands, both zsets
#      loaded first), each at -P 16 and -P 1. Then "producer LPUSH, 50
#      consumers BRPOP: deliveries/s": CONSUMERS clients of one
#      redis-benchmark in BRPOP benchq 0, and once the server counts them
#      blocked (INFO blocked_clients, 5 s at most), a second redis-benchmark
#      alongside, one client pipelining LPUSH benchq x at -P 16; each side
#      DELIVERIES requests; deliveries/s is DELIVERIES over the time from the
#      producer's start to the consumers' exit, CPU per delivery over both.
#      A server that answers BRPOP "unknown command" skips that row, logged.
#   2. Memory: used_memory (after MEMORY PURGE) after loading (redis-cli
#      --pipe) MANY hashes of 10 small fields, MANY sets of 10 small
#      integers, MANY lists of 10 short elements, MANY sorted sets of 10
#      members, one hash of BIG fields, one set of BIG members and one
#      sorted set of BIG members, each on an empty server; moond/redis.
#      ONLY selects memory rows by name too (hashes sets lists zsets
#      bighash bigset bigzset).
#   3. Reply time: SINTER of two sets of 100,000 members (half shared) and
#      HGETALL of a 10,000-field hash, timed by redis-benchmark (-c 1 -n 200:
#      1000 / rps is the mean reply time in ms), both servers loaded once and
#      measured in paired rounds like section 1.
#
# Knobs (environment): ROUNDS (7), REQUESTS (-P 1 rows, 200000),
# REQUESTS_PIPELINED (-P 16 rows, 1000000), CLIENTS (50), KEYSPACE (100000),
# CONSUMERS (50), DELIVERIES (200000), MANY (1000000), BIG (1000000),
# SERVER_CPU (0), CLIENT_CPU (1), ONLY (an extended regular expression over
# the row names of sections 1 and 3, e.g. 'ZRANGE|HGETALL'; section 3's are
# SINTER and HGETALL), SKIP_MEMORY=1, BENCH_MD (BENCHMARKS.md), SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-types # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
REQUESTS=${REQUESTS:-200000}
REQUESTS_PIPELINED=${REQUESTS_PIPELINED:-1000000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
CONSUMERS=${CONSUMERS:-50}
DELIVERIES=${DELIVERIES:-200000}
MANY=${MANY:-1000000}
BIG=${BIG:-1000000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
TICK=$(getconf CLK_TCK)
MARK_START='<!-- bench-types:start -->'
MARK_END='<!-- bench-types:end -->'


[ "${SKIP_BUILD:-0}" = 1 ] || go build -o "$MOOND_BIN" ./cmd/moond
command -v redis-server >/dev/null || die "redis-server is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-types-bench.XXXXXX")
pair_setup 1

# The throughput rows: a name ending in the pipeline depth, or the
# delivery row (BRPOP_ROW, run by run_brpop).
BRPOP_ROW="producer LPUSH, $CONSUMERS consumers BRPOP: deliveries/s"
ROWS=("HSET -P 16" "HGET -P 16" "SADD -P 16" "SISMEMBER -P 16" "LPUSH -P 16" "RPOP -P 16" "ZADD -P 16" "ZRANGE 0 9 -P 16"
	"HSET -P 1" "HGET -P 1" "SADD -P 1" "SISMEMBER -P 1" "LPUSH -P 1" "RPOP -P 1" "ZADD -P 1" "ZRANGE 0 9 -P 1"
	"$BRPOP_ROW")
if [ -n "${ONLY:-}" ]; then
	mapfile -t ROWS < <(printf '%s\n' "${ROWS[@]}" | grep -E "$ONLY" || true)
fi
row_args() {
	case ${1%% *} in
	HSET) echo "-t hset" ;;
	SADD) echo "-t sadd" ;;
	HGET) echo "HGET myhash element:__rand_int__" ;;
	SISMEMBER) echo "SISMEMBER myset element:__rand_int__" ;;
	LPUSH) echo "LPUSH mylist xxx" ;;
	RPOP) echo "RPOP mylist" ;;
	ZADD) echo "ZADD myzset __rand_int__ element:__rand_int__" ;;
	ZRANGE) echo "ZRANGE zset1k 0 9" ;;
	esac
}

# run SERVER ROW: one redis-benchmark run; prints "rps user_us sys_us" (CPU
# per request).
run() {
	local s=$1 row=$2 p n c0 c1 out rps
	if [ "$row" = "$BRPOP_ROW" ]; then
		run_brpop "$s"
		return
	fi
	p=${row##* }
	n=$REQUESTS
	[ "$p" -gt 1 ] && n=$REQUESTS_PIPELINED
	[ "${row%% *}" = RPOP ] && topup "$s" "$n"
	c0=$(cpu "$s")
	# shellcheck disable=SC2046
	out=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "${PORT[$s]}" -c "$CLIENTS" -n "$n" -P "$p" -r "$KEYSPACE" \
		--csv -q $(row_args "$row") 2>/dev/null | tail -1)
	c1=$(cpu "$s")
	rps=$(echo "$out" | awk -F'","' '{gsub(/"/, "", $2); print $2}')
	per_request "$rps" "$c0" "$c1" "$n"
}

# topup SERVER N: pushes to mylist, untimed, until it holds at least N
# elements, so that an RPOP run never pops an empty list.
topup() {
	local have
	have=$(cli "$1" LLEN mylist)
	[ "$have" -lt "$2" ] || return 0
	awk -v n=$(($2 - have)) 'BEGIN {
		for (i = 0; i < n; i += 1000) {
			k = (n - i < 1000) ? n - i : 1000
			printf "*%d\r\n$5\r\nLPUSH\r\n$6\r\nmylist\r\n", k + 2
			for (j = 0; j < k; j++) printf "$3\r\nxxx\r\n"
		}
	}' | redis-cli -p "${PORT[$1]}" --pipe >/dev/null
}

# knows_brpop SERVER: whether the server has BRPOP (moond before the
# blocking commands answers "unknown command").
knows_brpop() {
	! cli "$1" BRPOP benchq:probe 0.01 2>&1 | grep -qi 'unknown command'
}

# blocked SERVER: INFO's blocked_clients (0 where the server has none).
blocked() {
	cli "$1" INFO clients | tr -d '\r' | awk -F: '$1 == "blocked_clients" {b = $2} END {print b + 0}'
}

# run_brpop SERVER: one run of the delivery row; prints "deliveries/s
# user_us sys_us" (CPU per delivery, producer's and consumers' commands
# together).
run_brpop() {
	local s=$1 n=$DELIVERIES c0 c1 t0 t1 cons
	cli "$s" DEL benchq >/dev/null
	c0=$(cpu "$s")
	taskset -c "$CLIENT_CPU" timeout 300 redis-benchmark -p "${PORT[$s]}" -c "$CONSUMERS" -n "$n" -q \
		BRPOP benchq 0 >/dev/null 2>&1 &
	cons=$!
	for _ in $(seq 100); do
		[ "$(blocked "$s")" -ge "$CONSUMERS" ] && break
		sleep 0.05
	done
	t0=$(date +%s.%N)
	if ! taskset -c "$CLIENT_CPU" timeout 300 redis-benchmark -p "${PORT[$s]}" -c 1 -P 16 -n "$n" -q \
		LPUSH benchq x >/dev/null 2>&1; then
		kill "$cons" 2>/dev/null
		die "$s: the producer failed"
	fi
	wait "$cons" || die "$s: the consumers did not get $n deliveries"
	t1=$(date +%s.%N)
	c1=$(cpu "$s")
	per_request "$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}')" "$c0" "$c1" "$n"
}


# fill SERVER: the keys the HGET, SISMEMBER and ZADD rows read or
# update, every field and member of 0..KEYSPACE-1, as the hset and sadd
# tests name them, and the zset of the ZRANGE rows.
fill() {
	awk -v n="$KEYSPACE" 'BEGIN {
		for (i = 0; i < n; i++) {
			f = sprintf("element:%012d", i)
			printf "*4\r\n$4\r\nHSET\r\n$6\r\nmyhash\r\n$%d\r\n%s\r\n$3\r\nxxx\r\n", length(f), f
			printf "*3\r\n$4\r\nSADD\r\n$5\r\nmyset\r\n$%d\r\n%s\r\n", length(f), f
			printf "*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$%d\r\n%d\r\n$%d\r\n%s\r\n", length(i ""), i, length(f), f
		}
		for (i = 0; i < 1000; i++) {
			m = sprintf("member:%d", i)
			printf "*4\r\n$4\r\nZADD\r\n$6\r\nzset1k\r\n$%d\r\n%d\r\n$%d\r\n%s\r\n", length(i ""), i, length(m), m
		}
	}' | redis-cli -p "${PORT[$1]}" --pipe >/dev/null
}

declare -A RPS=() USR=() SYS=() SKIPPED=()
throughput() {
	[ ${#ROWS[@]} -gt 0 ] || return 0
	start moond
	start redis
	fill moond
	fill redis
	for s in moond redis; do
		if printf '%s\n' "${ROWS[@]}" | grep -qxF "$BRPOP_ROW" && ! knows_brpop "$s"; then
			SKIPPED[$s]="$s answers BRPOP with unknown command"
			log "skipping the row \"$BRPOP_ROW\" on $s: ${SKIPPED[$s]}"
		fi
	done
	for round in $(seq "$ROUNDS"); do
		local order=(moond redis)
		[ $((round % 2)) -eq 0 ] && order=(redis moond)
		for row in "${ROWS[@]}"; do
			for s in "${order[@]}"; do
				[ "$row" = "$BRPOP_ROW" ] && [ -n "${SKIPPED[$s]:-}" ] && continue
				read -r rps u sy < <(run "$s" "$row")
				[ -n "${rps:-}" ] || die "$s: no figure for the row $row"
				RPS[$s,$row]+="$rps "
				USR[$s,$row]+="$u "
				SYS[$s,$row]+="$sy "
			done
		done
		log "round $round of $ROUNDS done"
	done
	stop moond
	stop redis
}

# Memory loads: a generator per row, each a RESP stream for redis-cli --pipe.
gen_hashes() { awk -v n="$MANY" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("h:%09d", i)
	printf "*22\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n", length(k), k
	for (j = 0; j < 10; j++) printf "$6\r\nfield%d\r\n$8\r\nvalue:%02d\r\n", j, j } }'; }
gen_sets() { awk -v n="$MANY" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("s:%09d", i)
	printf "*12\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n", length(k), k
	for (j = 0; j < 10; j++) { m = sprintf("%d", i % 1000 + j * 1000); printf "$%d\r\n%s\r\n", length(m), m } } }'; }
gen_bighash() { awk -v n="$BIG" 'BEGIN { for (i = 0; i < n; i++) { f = sprintf("field:%09d", i)
	printf "*4\r\n$4\r\nHSET\r\n$7\r\nbighash\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", length(f), f } }'; }
gen_bigset() { awk -v n="$BIG" 'BEGIN { for (i = 0; i < n; i++) { m = sprintf("member:%09d", i)
	printf "*3\r\n$4\r\nSADD\r\n$6\r\nbigset\r\n$%d\r\n%s\r\n", length(m), m } }'; }
gen_lists() { awk -v n="$MANY" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("l:%09d", i)
	printf "*12\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n", length(k), k
	for (j = 0; j < 10; j++) printf "$8\r\nvalue:%02d\r\n", j } }'; }
gen_zsets() { awk -v n="$MANY" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("z:%09d", i)
	printf "*22\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n", length(k), k
	for (j = 0; j < 10; j++) { s = sprintf("%d", i % 1000 + j * 1000)
		printf "$%d\r\n%s\r\n$8\r\nmember%02d\r\n", length(s), s, j } } }'; }
gen_bigzset() { awk -v n="$BIG" 'BEGIN { for (i = 0; i < n; i++) { m = sprintf("member:%09d", i); s = sprintf("%d", i)
	printf "*4\r\n$4\r\nZADD\r\n$7\r\nbigzset\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(s), s, length(m), m } }'; }
MEM_ROWS=(hashes sets lists zsets bighash bigset bigzset)
declare -A MEM_LABEL=([hashes]="$MANY hashes of 10 small fields" [sets]="$MANY sets of 10 small integers"
	[lists]="$MANY lists of 10 short elements" [zsets]="$MANY sorted sets of 10 members"
	[bighash]="one hash of $BIG fields" [bigset]="one set of $BIG members" [bigzset]="one sorted set of $BIG members")
if [ -n "${ONLY:-}" ]; then
	mapfile -t MEM_ROWS < <(printf '%s\n' "${MEM_ROWS[@]}" | grep -E "$ONLY" || true)
fi
declare -A MEM=()
# used SERVER: used_memory after MEMORY PURGE (moond: the Go heap after a
# collection, live data only; redis-server: jemalloc's count, exact anyway).
used() {
	cli "$1" MEMORY PURGE >/dev/null
	cli "$1" INFO memory | tr -d '\r' | awk -F: '$1 == "used_memory" {print $2}'
}
memory() {
	[ "${SKIP_MEMORY:-0}" = 1 ] && return 0
	for row in "${MEM_ROWS[@]}"; do
		for s in moond redis; do
			start "$s"
			local before after
			before=$(used "$s")
			"gen_$row" | redis-cli -p "${PORT[$s]}" --pipe >/dev/null
			after=$(used "$s")
			MEM[$s,$row]=$((after - before))
			MEM[$s,$row,enc]=$(cli "$s" OBJECT ENCODING "$(cli "$s" RANDOMKEY)")
			stop "$s"
		done
		log "memory $row: moond ${MEM[moond,$row]} B, redis ${MEM[redis,$row]} B"
	done
}

# Reply time of a big read: SINTER of two 100k sets, HGETALL of 10k fields.
REPLY_ROWS=(SINTER HGETALL)
if [ -n "${ONLY:-}" ]; then
	mapfile -t REPLY_ROWS < <(printf '%s\n' "${REPLY_ROWS[@]}" | grep -E "$ONLY" || true)
fi
declare -A REPLY_CMD=([SINTER]="SINTER {s}one {s}two" [HGETALL]="HGETALL hh")
declare -A REPLY_LABEL=([SINTER]="SINTER of two 100,000-member sets (50,000 shared)"
	[HGETALL]="HGETALL of a 10,000-field hash")
declare -A REPLY=() REPLY_USR=() REPLY_SYS=()
fill_reply() {
	awk 'BEGIN { for (i = 0; i < 100000; i++) {
		a = sprintf("%d", i); b = sprintf("%d", i + 50000)
		printf "*3\r\n$4\r\nSADD\r\n$6\r\n{s}one\r\n$%d\r\n%s\r\n", length(a), a
		printf "*3\r\n$4\r\nSADD\r\n$6\r\n{s}two\r\n$%d\r\n%s\r\n", length(b), b }
		for (i = 0; i < 10000; i++) { f = sprintf("f%d", i)
		printf "*4\r\n$4\r\nHSET\r\n$2\r\nhh\r\n$%d\r\n%s\r\n$8\r\nvalue:xx\r\n", length(f), f } }' |
		redis-cli -p "${PORT[$1]}" --pipe >/dev/null
}
# reply_time SERVER ROW: one redis-benchmark -c 1 -n 200 run; prints
# "ms user_us sys_us" (the mean reply time, CPU per request).
reply_time() {
	local s=$1 n=200 c0 c1 rps
	c0=$(cpu "$s")
	# shellcheck disable=SC2086
	rps=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "${PORT[$s]}" -c 1 -n $n --csv -q ${REPLY_CMD[$2]} 2>/dev/null |
		tail -1 | awk -F'","' '{gsub(/"/, "", $2); print $2}')
	c1=$(cpu "$s")
	per_request "$(awk -v r="$rps" 'BEGIN {if (r > 0) printf "%.3f", 1000 / r}')" "$c0" "$c1" "$n"
}
reply_times() {
	[ ${#REPLY_ROWS[@]} -gt 0 ] || return 0
	start moond
	start redis
	fill_reply moond
	fill_reply redis
	for round in $(seq "$ROUNDS"); do
		local order=(moond redis)
		[ $((round % 2)) -eq 0 ] && order=(redis moond)
		for row in "${REPLY_ROWS[@]}"; do
			for s in "${order[@]}"; do
				read -r ms u sy < <(reply_time "$s" "$row")
				[ -n "${ms:-}" ] || die "$s: no reply time for $row"
				REPLY[$s,$row]+="$ms "
				REPLY_USR[$s,$row]+="$u "
				REPLY_SYS[$s,$row]+="$sy "
			done
		done
	done
	stop moond
	stop redis
}

throughput
memory
reply_times

{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"$ROUNDS paired rounds; moond --shards 1 --appendonly no and redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2)" \
		"--save '' --appendonly no, both on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU" \
		"(-c $CLIENTS -r $KEYSPACE; -n $REQUESTS at -P 1, $REQUESTS_PIPELINED at -P 16; the delivery row: -n $DELIVERIES," \
		"$CONSUMERS consumers, one producer at -P 16). \`make bench-types\` (part of \`make bench-redis\`)."
	echo
	if [ ${#ROWS[@]} -gt 0 ]; then
		echo "| row | moond rps | redis rps | moond/redis median | range | moond user/sys µs/req | redis user/sys µs/req |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for row in "${ROWS[@]}"; do
			if [ -z "${RPS[moond,$row]:-}" ]; then # the delivery row, skipped on moond
				printf "| %s | — (%s) | %.0f | — | — | — | %.2f / %.2f |\n" "$row" "${SKIPPED[moond]:-no figure}" \
					"$(echo "${RPS[redis,$row]:-}" | median)" \
					"$(echo "${USR[redis,$row]:-}" | median)" "$(echo "${SYS[redis,$row]:-}" | median)"
				continue
			fi
			r=$(ratios "${RPS[moond,$row]}" "${RPS[redis,$row]:-}")
			printf "| %s | %.0f | %.0f | %.2f | %.2f–%.2f | %.2f / %.2f | %.2f / %.2f |\n" "$row" \
				"$(echo "${RPS[moond,$row]}" | median)" "$(echo "${RPS[redis,$row]:-}" | median)" \
				"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
				"$(echo "${USR[moond,$row]}" | median)" "$(echo "${SYS[moond,$row]}" | median)" \
				"$(echo "${USR[redis,$row]:-}" | median)" "$(echo "${SYS[redis,$row]:-}" | median)"
		done
		echo
	fi
	if [ "${SKIP_MEMORY:-0}" != 1 ] && [ ${#MEM_ROWS[@]} -gt 0 ]; then
		echo "| memory (used_memory growth) | moond | redis | moond/redis | encodings (moond / redis) |"
		echo "|---|---:|---:|---:|---|"
		for row in "${MEM_ROWS[@]}"; do
			printf "| %s | %.1f MB | %.1f MB | %.2f | %s / %s |\n" "${MEM_LABEL[$row]}" \
				"$(awk -v x="${MEM[moond,$row]}" 'BEGIN {print x / 1048576}')" \
				"$(awk -v x="${MEM[redis,$row]}" 'BEGIN {print x / 1048576}')" \
				"$(awk -v a="${MEM[moond,$row]}" -v b="${MEM[redis,$row]}" 'BEGIN {printf "%.2f", a / b}')" \
				"${MEM[moond,$row,enc]}" "${MEM[redis,$row,enc]}"
		done
		echo
	fi
	if [ ${#REPLY_ROWS[@]} -gt 0 ]; then
		echo "| reply time (redis-benchmark -c 1 -n 200) | moond ms | redis ms | moond/redis median | range | moond user/sys µs/req | redis user/sys µs/req |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for row in "${REPLY_ROWS[@]}"; do
			r=$(ratios "${REPLY[moond,$row]}" "${REPLY[redis,$row]}")
			printf "| %s | %.3f | %.3f | %.2f | %.2f–%.2f | %.0f / %.0f | %.0f / %.0f |\n" "${REPLY_LABEL[$row]}" \
				"$(echo "${REPLY[moond,$row]}" | median)" "$(echo "${REPLY[redis,$row]}" | median)" \
				"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
				"$(echo "${REPLY_USR[moond,$row]}" | median)" "$(echo "${REPLY_SYS[moond,$row]}" | median)" \
				"$(echo "${REPLY_USR[redis,$row]}" | median)" "$(echo "${REPLY_SYS[redis,$row]}" | median)"
		done
	fi
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Data types against redis-server"
log "wrote the bench-types section of $BENCH_MD"
