#!/usr/bin/env bash
# cold_compare.sh: the cold tier (issue 19) against the same moond with all
# its data in memory. moond-only: redis-server cannot hold 4x its
# maxmemory, so there is no redis-server column.
#
# Two moond --shards 1 --appendonly yes --appendfsync everysec, both pinned
# to SERVER_CPU, bench/coldload on CLIENT_CPU:
#
#   cold  --maxmemory MAXMEMORY --maxmemory-policy allkeys-lru
#         --tiered-storage yes
#   mem   no maxmemory: every value in memory
#
# Each gets KEYS keys (key:%012d) of VALUE bytes (default: 4x MAXMEMORY of
# data), each key written once (SETs the cold server refuses with OOM
# before a checkpoint made values durable are sent again), then BGSAVE
# until a checkpoint completed and, on the cold server, INFO cold_keys > 0.
# One untimed run of each row per server, then paired rounds: every round
# runs each row on both servers back to back, in an order that alternates.
#
#   GET uniform   N_UNIFORM GETs, keys drawn uniformly
#   GET zipfian   N_ZIPF GETs, keys drawn from a zipfian distribution
#                 (exponent ZIPF_S) through a fixed permutation of the keys
#
# both at -P 16 over 50 connections (bench/coldload). Per row: each
# server's median GET/s, p50 and p99 (ms, a GET's time from the write of
# its pipeline to its reply), the median and range of the per-round ratios
# cold/mem, each server's user and system CPU per GET, and the cold
# server's disk reads per GET: INFO cold_reads and /proc/PID/io read_bytes
# deltas over the run, divided by the GETs. At the end: RSS of both against
# maxmemory, cold_keys, cold_read_usec_per_read.
#
# Knobs (environment): ROUNDS (7), MAXMEMORY_MB (64), VALUE (1024), KEYS
# (4 x MAXMEMORY_MB MiB / VALUE), N_UNIFORM (40000), N_ZIPF (100000),
# ZIPF_S (0.99), COLD_ARGS (more moond flags for both servers, empty),
# SERVER_CPU (0), CLIENT_CPU (1), BENCH_MD (BENCHMARKS.md),
# SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-cold # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
ROUNDS=${ROUNDS:-7}
MAXMEMORY_MB=${MAXMEMORY_MB:-64}
VALUE=${VALUE:-1024}
KEYS=${KEYS:-$((4 * MAXMEMORY_MB * 1048576 / VALUE))}
N_UNIFORM=${N_UNIFORM:-40000}
N_ZIPF=${N_ZIPF:-100000}
ZIPF_S=${ZIPF_S:-0.99}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
COLDLOAD=${COLDLOAD:-$ROOT/bin/coldload}
MARK_START='<!-- bench-cold:start -->'
MARK_END='<!-- bench-cold:end -->'


if [ "${SKIP_BUILD:-0}" != 1 ]; then
	go build -o "$MOOND_BIN" ./cmd/moond
fi
go build -o "$COLDLOAD" ./bench/coldload
command -v redis-cli >/dev/null || die "redis-cli is missing (make apt-deps)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-cold-bench.XXXXXX")
base=$((21000 + RANDOM % 8000))
declare -A PID=() PORT=([cold]=$base [mem]=$((base + 1)))
cleanup() {
	for s in "${!PID[@]}"; do
		[ -n "${PID[$s]}" ] && kill -9 "${PID[$s]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

cli() { taskset -c "$CLIENT_CPU" redis-cli -p "${PORT[$1]}" "${@:2}"; }
info() { cli "$1" INFO "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }
readbytes() { awk '$1 == "read_bytes:" {print $2}' "/proc/${PID[$1]}/io"; }
rss_mb() { awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/${PID[$1]}/status"; }

launch() {
	local s=$1 extra=() more=()
	[ "$s" = cold ] && extra=(--maxmemory "${MAXMEMORY_MB}mb" --maxmemory-policy allkeys-lru --tiered-storage yes)
	# COLD_ARGS: more flags for both servers (e.g. --pagecache-size 16mb).
	read -ra more <<<"${COLD_ARGS:-}"
	extra+=("${more[@]}")
	mkdir -p "$WORK/$s"
	taskset -c "$SERVER_CPU" "$MOOND_BIN" --port "${PORT[$s]}" --dir "$WORK/$s" --shards 1 \
		--appendonly yes --appendfsync everysec "${extra[@]}" >"$WORK/$s.log" 2>&1 &
	PID[$s]=$!
	await_ping "$s"
}

# checkpoint S: BGSAVE and wait for it (and for any checkpoint running) to end.
checkpoint() {
	local s=$1 done0
	for _ in $(seq 1200); do
		[ "$(info "$s" persistence checkpoint_in_progress)" = 0 ] && break
		sleep 0.1
	done
	done0=$(info "$s" persistence checkpoints_completed)
	cli "$s" BGSAVE >/dev/null
	for _ in $(seq 1200); do
		[ "$(info "$s" persistence checkpoints_completed)" -gt "$done0" ] &&
			[ "$(info "$s" persistence checkpoint_in_progress)" = 0 ] && return
		sleep 0.1
	done
	die "$s: no checkpoint completed in 120 s"
}

# gets S DIST N: prints "rate p50 p99 user_us sys_us cold_reads/GET read_bytes/GET".
gets() {
	local s=$1 dist=$2 n=$3 c0 c1 cr0 cr1 rb0 rb1 out rate p50 p99 hits
	c0=$(cpu "$s")
	cr0=$(info "$s" stats cold_reads)
	rb0=$(readbytes "$s")
	out=$(taskset -c "$CLIENT_CPU" "$COLDLOAD" -addr "127.0.0.1:${PORT[$s]}" -mode get -dist "$dist" -s "$ZIPF_S" \
		-n "$n" -P 16 -clients 50 -keyspace "$KEYS") || die "$s: coldload get failed"
	c1=$(cpu "$s")
	cr1=$(info "$s" stats cold_reads)
	rb1=$(readbytes "$s")
	read -r rate p50 p99 hits <<<"$out"
	[ "$hits" = "$n" ] || die "$s: $hits of $n GETs hit"
	read -r _ u sy < <(per_request "$rate" "$c0" "$c1" "$n")
	awk -v r="$rate" -v a="$p50" -v b="$p99" -v u="$u" -v sy="$sy" -v cr=$((${cr1:-0} - ${cr0:-0})) \
		-v rb=$((rb1 - rb0)) -v n="$n" 'BEGIN {printf "%s %s %s %s %s %.3f %.0f\n", r, a, b, u, sy, cr / n, rb / n}'
}

for s in cold mem; do
	launch "$s"
	r=$(taskset -c "$CLIENT_CPU" "$COLDLOAD" -addr "127.0.0.1:${PORT[$s]}" -mode load -keyspace "$KEYS" -value "$VALUE")
	[ "$(cli "$s" DBSIZE)" = "$KEYS" ] || die "$s: holds $(cli "$s" DBSIZE) keys, not $KEYS"
	checkpoint "$s"
	log "$s loaded $KEYS keys ($r SET/s), checkpoint done, cold_keys $(info "$s" memory cold_keys)"
done
for _ in 1 2 3; do
	[ "$(info cold memory cold_keys)" -gt 0 ] && break
	checkpoint cold
done
[ "$(info cold memory cold_keys)" -gt 0 ] || die "cold: no cold keys after the checkpoints"
COLD_AFTER_LOAD=$(info cold memory cold_keys)
RSS_AFTER_LOAD=$(rss_mb cold)
for s in cold mem; do
	gets "$s" uniform "$N_UNIFORM" >/dev/null
	gets "$s" zipf "$N_ZIPF" >/dev/null
done
log "warm-up runs done"

declare -A RATE=() P50=() P99=() USR=() SYS=() CR=() RB=()
for round in $(seq "$ROUNDS"); do
	order=(cold mem)
	[ $((round % 2)) -eq 0 ] && order=(mem cold)
	for dist in uniform zipf; do
		n=$N_UNIFORM
		[ "$dist" = zipf ] && n=$N_ZIPF
		for s in "${order[@]}"; do
			read -r rate p50 p99 u sy cr rb < <(gets "$s" "$dist" "$n")
			RATE[$s.$dist]+="$rate "
			P50[$s.$dist]+="$p50 "
			P99[$s.$dist]+="$p99 "
			USR[$s.$dist]+="$u "
			SYS[$s.$dist]+="$sy "
			CR[$s.$dist]+="$cr "
			RB[$s.$dist]+="$rb "
		done
	done
	log "round $round of $ROUNDS done"
done

med() { echo "$1" | median; }
{
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo))," \
		"other work running on the host; $ROUNDS paired rounds. moond-only (redis-server cannot hold 4x its maxmemory)." \
		"Two moond --shards 1 --appendonly yes --appendfsync everysec on CPU $SERVER_CPU: **cold** with --maxmemory ${MAXMEMORY_MB}mb" \
		"--maxmemory-policy allkeys-lru --tiered-storage yes, **mem** without maxmemory (all in memory)${COLD_ARGS:+, both with $COLD_ARGS}; each loaded with" \
		"$KEYS keys of $VALUE bytes ($((KEYS * VALUE / 1048576)) MiB of values, 4x maxmemory), checkpointed (BGSAVE)." \
		"bench/coldload on CPU $CLIENT_CPU: GETs at -P 16 over 50 connections, $N_UNIFORM a run (uniform)," \
		"$N_ZIPF a run (zipfian, s = $ZIPF_S); every GET hit. \`make bench-cold\`."
	echo
	echo "| row | cold GET/s | mem GET/s | cold/mem median | range | cold p50 / p99 ms | mem p50 / p99 ms | cold user/sys µs/GET | mem user/sys µs/GET | cold: cold_reads/GET | cold: read_bytes/GET |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for dist in uniform zipf; do
		label="GET uniform, -P 16"
		[ "$dist" = zipf ] && label="GET zipfian (s = $ZIPF_S), -P 16"
		r=$(ratios "${RATE[cold.$dist]}" "${RATE[mem.$dist]}")
		printf "| %s | %.0f | %.0f | %.3f | %.3f–%.3f | %s / %s | %s / %s | %.2f / %.2f | %.2f / %.2f | %.3f | %.0f |\n" "$label" \
			"$(med "${RATE[cold.$dist]}")" "$(med "${RATE[mem.$dist]}")" \
			"$(echo "$r" | median)" "$(echo "$r" | lo)" "$(echo "$r" | hi)" \
			"$(med "${P50[cold.$dist]}")" "$(med "${P99[cold.$dist]}")" \
			"$(med "${P50[mem.$dist]}")" "$(med "${P99[mem.$dist]}")" \
			"$(med "${USR[cold.$dist]}")" "$(med "${SYS[cold.$dist]}")" \
			"$(med "${USR[mem.$dist]}")" "$(med "${SYS[mem.$dist]}")" \
			"$(med "${CR[cold.$dist]}")" "$(med "${RB[cold.$dist]}")"
	done
	echo
	echo "Memory: cold RSS $RSS_AFTER_LOAD MB after the load and checkpoint ($COLD_AFTER_LOAD cold keys), $(rss_mb cold) MB at the end" \
		"(maxmemory $MAXMEMORY_MB MB: $(awk -v a="$(rss_mb cold)" -v m="$MAXMEMORY_MB" 'BEGIN {printf "%.1f", a / m}')x);" \
		"at the end cold_keys $(info cold memory cold_keys), used_memory $(($(info cold memory used_memory) / 1048576)) MB," \
		"cold_read_usec_per_read $(info cold stats cold_read_usec_per_read), cold_reads_sync $(info cold stats cold_reads_sync)," \
		"cold_read_misses $(info cold stats cold_read_misses). mem RSS $(rss_mb mem) MB."
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Cold tier: GETs over 4x maxmemory (\`make bench-cold\`)"
log "wrote the bench-cold section of $BENCH_MD"
