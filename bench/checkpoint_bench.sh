#!/usr/bin/env bash
# checkpoint_bench.sh: what the checkpoint costs and what it buys, on moond
# alone (make bench-checkpoint). Writes the section between the
# bench-checkpoint markers of BENCHMARKS.md.
#
#   1. Restart time with KEYSPACE keys: replaying the whole WAL (no
#      checkpoint ever ran) versus loading the heap and replaying a small
#      WAL tail (SAVE, then TAIL more writes), both after kill -9.
#   2. GET and SET latency (redis-benchmark -P 1) with no checkpoint running
#      and while checkpoints run: before each such run every key is made
#      dirty and BGSAVE starts one, and checkpoint-timeout is 1 s so that
#      the SET run's own writes keep them coming.
#   2b. The same data set loaded by moond (SAVE, SHUTDOWN, start: the heap
#      alone) and by redis-server (SAVE, SHUTDOWN, start: its RDB), each
#      pinned to SERVER_CPU, timed from launch until loading:0.
#   3. A checkpoint over cold pages: COLD_PAGES pages of keys (two keys of
#      1800 bytes a page), SAVE, kill -9, restart (boot caches no page),
#      DEL every key, and the time of the BGSAVE that frees them all: each
#      free needs its page read back from the disk.
#
# Knobs (environment): KEYSPACE (1000000), TAIL (10000), REQUESTS (500000),
# COLD_PAGES (50000: more than the page cache's 32768 pages of 128 MiB, so
# that the checkpoint must write dirty pages while it still frees, a
# spill, to make room for the cold pages it reads),
# CLIENTS (50), DATA_SIZE (64), RUNS (7: the restart rows are paired
# rounds, moond and redis-server back to back in each), SERVER_CPU (0), CLIENT_CPU (1),
# IO_BACKEND (auto), BENCH_MD, KEEP_WORK=1, SKIP_BUILD=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
BENCH_TAG=bench-checkpoint # log and die (lib.sh) prefix their lines with it
. bench/lib.sh
KEYSPACE=${KEYSPACE:-1000000}
TAIL=${TAIL:-10000}
REQUESTS=${REQUESTS:-500000}
CLIENTS=${CLIENTS:-50}
DATA_SIZE=${DATA_SIZE:-64}
COLD_PAGES=${COLD_PAGES:-50000}
RUNS=${RUNS:-7}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
IO_BACKEND=${IO_BACKEND:-auto}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
MARK_START='<!-- bench-checkpoint:start -->'
MARK_END='<!-- bench-checkpoint:end -->'

now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/moond-ckpt-bench.XXXXXX")
PID=""
PORT=$((20000 + RANDOM % 10000))
cleanup() {
	[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
	[ "${KEEP_WORK:-0}" = 1 ] && log "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

cli() { taskset -c "$CLIENT_CPU" redis-cli -h 127.0.0.1 -p "$PORT" "$@"; }
info() { cli INFO persistence | tr -d '\r' | awk -F: -v f="$1" '$1 == f { print $2; exit }'; }

start() { # DIR ARGS...: start moond and wait until it answers
	local dir=$1 deadline
	shift
	taskset -c "$SERVER_CPU" "$MOOND_BIN" --port "$PORT" --dir "$dir" --shards 1 --io-backend "$IO_BACKEND" "$@" >>"$dir.log" 2>&1 &
	PID=$!
	deadline=$(($(now_us) + 900 * 1000000))
	# moond listens while it loads (PING answers, data commands get
	# LOADING): ready is loading:0.
	until [ "$(cli PING 2>/dev/null)" = PONG ] && [ "$(info loading)" = 0 ]; do
		kill -0 "$PID" 2>/dev/null || die "moond exited: $(tail -n 5 "$dir.log")"
		(($(now_us) < deadline)) || die "moond not ready"
		sleep 0.005
	done
}
kill9() {
	kill -9 "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
}
preload() { # N [SIZE]: SET key:%012d for N keys through redis-cli --pipe
	awk -v n="$1" -v size="${2:-$DATA_SIZE}" 'BEGIN {
		v = sprintf("%*s", size, ""); gsub(/ /, "x", v)
		for (i = 0; i < n; i++) printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n%s\r\n", i, size, v
	}' | taskset -c "$CLIENT_CPU" redis-cli -h 127.0.0.1 -p "$PORT" --pipe >/dev/null
}
delete_all() { # N: DEL key:%012d for N keys through redis-cli --pipe
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) printf "*2\r\n$3\r\nDEL\r\n$16\r\nkey:%012d\r\n", i
	}' | taskset -c "$CLIENT_CPU" redis-cli -h 127.0.0.1 -p "$PORT" --pipe >/dev/null
}
ELAPSED=""
timed_restart() { # DIR ARGS...: ELAPSED = seconds from launch to PONG
	local t
	t=$(now_us)
	start "$@"
	ELAPSED=$(awk -v us=$(($(now_us) - t)) 'BEGIN { printf "%.2f", us / 1e6 }')
}
# boot_cpu: "user sys", the seconds of CPU the server process (PID) spent
# so far, read once it is ready: its boot's CPU (/proc/PID/stat).
boot_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f %.2f\n", $14 / hz, $15 / hz }' "/proc/$PID/stat"; }
# cpu_cells LIST...: "user / sys", the medians of "user sys" pairs.
cpu_cells() {
	local -a u=() s=()
	local x
	for x in "$@"; do
		u+=("${x% *}")
		s+=("${x#* }")
	done
	echo "$(median "${u[@]}") / $(median "${s[@]}")"
}
replayed() { # LOGFILE: data records the last boot replayed
	grep 'WAL replayed' "$1" | tail -n 1 | sed -n 's/.* records=\([0-9]*\).*/\1/p'
}

[ "${SKIP_BUILD:-0}" = 1 ] || go build -o "$MOOND_BIN" ./cmd/moond
command -v redis-benchmark >/dev/null || die "redis-benchmark is needed (make deps)"
quiet=(--checkpoint-timeout 86400 --max-wal-size 1000gb)

# ------------------------------------------------------------ restart
log "restart: $KEYSPACE keys"
D=$WORK/restart
mkdir -p "$D"
start "$D" "${quiet[@]}"
preload "$KEYSPACE"
kill9
full=() full_cpu=()
for ((i = 0; i < RUNS; i++)); do
	timed_restart "$D" "${quiet[@]}"
	full+=("$ELAPSED")
	full_cpu+=("$(boot_cpu)")
	full_records=$(replayed "$D.log")
	kill9
done
start "$D" "${quiet[@]}"
cli SAVE >/dev/null
taskset -c "$CLIENT_CPU" redis-benchmark -p "$PORT" -t set -n "$TAIL" -r "$KEYSPACE" -d "$DATA_SIZE" -q >/dev/null
kill9
tail_t=() tail_cpu=()
for ((i = 0; i < RUNS; i++)); do
	timed_restart "$D" "${quiet[@]}"
	tail_t+=("$ELAPSED")
	tail_cpu+=("$(boot_cpu)")
	tail_records=$(replayed "$D.log")
	keys=$(cli DBSIZE)
	kill9
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# ------------------------------------------------------------ against redis
# The same keys loaded by both servers, on the same CPU, in turns.
log "restart against redis-server: $KEYSPACE keys"
start "$D" "${quiet[@]}"
cli SAVE >/dev/null
cli SHUTDOWN >/dev/null 2>&1 || true
wait "$PID" 2>/dev/null || true
PID=""
RD=$WORK/redis
mkdir -p "$RD"
redis_start() {
	taskset -c "$SERVER_CPU" redis-server --port "$PORT" --dir "$RD" --save '' --appendonly no --logfile "$RD.log" &
	PID=$!
	local deadline=$(($(now_us) + 900 * 1000000))
	until [ "$(cli PING 2>/dev/null)" = PONG ] && [ "$(info loading)" = 0 ]; do
		kill -0 "$PID" 2>/dev/null || die "redis-server exited: $(tail -n 5 "$RD.log")"
		(($(now_us) < deadline)) || die "redis-server not ready"
		sleep 0.005
	done
}
redis_start
preload "$KEYSPACE"
cli SAVE >/dev/null
cli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$PID" 2>/dev/null || true
moond_load=() redis_load=() load_ratio=() moond_cpu=() redis_cpu=()
load_moond() { # one timed start of moond on its heap, then SHUTDOWN
	timed_restart "$D" "${quiet[@]}"
	moond_load+=("$ELAPSED")
	moond_cpu+=("$(boot_cpu)")
	moond_keys=$(cli DBSIZE)
	cli SHUTDOWN >/dev/null 2>&1 || true
	wait "$PID" 2>/dev/null || true
	PID=""
}
load_redis() { # one timed start of redis-server on its RDB, then SHUTDOWN NOSAVE
	local t
	t=$(now_us)
	redis_start
	redis_load+=("$(awk -v us=$(($(now_us) - t)) 'BEGIN { printf "%.2f", us / 1e6 }')")
	redis_cpu+=("$(boot_cpu)")
	redis_keys=$(cli DBSIZE)
	cli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "$PID" 2>/dev/null || true
	PID=""
}
# Paired rounds, the order alternating: a drifting host moves both.
for ((i = 0; i < RUNS; i++)); do
	if ((i % 2)); then
		load_redis
		load_moond
	else
		load_moond
		load_redis
	fi
	load_ratio+=("$(awk -v a="${moond_load[$i]}" -v b="${redis_load[$i]}" 'BEGIN { printf "%.2f", a / b }')")
done

# ------------------------------------------------------------ latency
bench() { # TEST: "rps p50 p99" of one redis-benchmark run
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$PORT" -t "$1" -P 1 -c "$CLIENTS" -n "$REQUESTS" -r "$KEYSPACE" -d "$DATA_SIZE" --csv |
		awk 'NR == 2 { gsub(/"/, ""); split($0, f, ","); print f[2], f[5], f[7] }'
}
log "latency: $KEYSPACE keys, $REQUESTS requests per run"
L=$WORK/latency
mkdir -p "$L"
start "$L" "${quiet[@]}"
preload "$KEYSPACE"
cli SAVE >/dev/null
declare -A R=()
for ((i = 0; i < RUNS; i++)); do
	for t in get set; do
		cli CONFIG SET checkpoint-timeout 86400 >/dev/null
		cli SAVE >/dev/null
		R[$t.off]+="$(bench "$t")"$'\n'
		preload "$KEYSPACE" # every key dirty
		cli CONFIG SET checkpoint-timeout 1 >/dev/null
		before=$(info checkpoints_completed)
		cli BGSAVE >/dev/null
		R[$t.on]+="$(bench "$t") $(($(info checkpoints_completed) - before)) $(info checkpoint_in_progress)"$'\n'
	done
done
kill9
col() { awk -v c="$2" 'NF { print $c }' <<<"$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# ------------------------------------------------------------ cold pages
COLD_KEYS=$((2 * COLD_PAGES))
log "cold pages: $COLD_PAGES pages ($COLD_KEYS keys of 1800 bytes) deleted after a restart"
C=$WORK/cold
mkdir -p "$C"
start "$C" "${quiet[@]}"
preload "$COLD_KEYS" 1800
cli SAVE >/dev/null
kill9
cold_t=()
for ((i = 0; i < RUNS; i++)); do
	rm -rf "$C.run"
	cp -a "$C" "$C.run"
	start "$C.run" "${quiet[@]}"
	delete_all "$COLD_KEYS"
	before=$(info checkpoints_completed)
	t=$(now_us)
	cli BGSAVE >/dev/null
	deadline=$((t + 3600 * 1000000))
	until (($(info checkpoints_completed) > before)); do
		(($(now_us) < deadline)) || die "the BGSAVE over cold pages did not finish in an hour"
		sleep 0.01
	done
	cold_t+=("$(awk -v us=$(($(now_us) - t)) 'BEGIN { printf "%.2f", us / 1e6 }')")
	cold_loaded=$(info checkpoint_pages_loaded)
	cold_rounds=$(info checkpoint_page_loads)
	cold_spilled=$(info checkpoint_pages_spilled)
	kill9
done

# ------------------------------------------------------------ report
{
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`make bench-checkpoint\` on $(nproc) CPUs" \
		"($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r), backend $IO_BACKEND;" \
		"moond on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU; medians of $RUNS runs."
	echo
	echo "| restart with $KEYSPACE keys of $DATA_SIZE bytes, after kill -9 | seconds | boot CPU user / sys s | WAL records replayed |"
	echo "|---|---:|---:|---:|"
	echo "| whole WAL (no checkpoint ever ran) | $(median "${full[@]}") | $(cpu_cells "${full_cpu[@]}") | $full_records |"
	echo "| heap + WAL tail (SAVE, then $TAIL SETs) | $(median "${tail_t[@]}") | $(cpu_cells "${tail_cpu[@]}") | $tail_records |"
	echo
	echo "| load $KEYSPACE keys of $DATA_SIZE bytes after SAVE and SHUTDOWN, same CPU, $RUNS paired rounds | moond s | redis-server s | moond/redis per round (median, range) | moond boot CPU user / sys s | redis-server boot CPU user / sys s | keys (moond, redis) |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	echo "| heap (moond), RDB (redis-server) | $(median "${moond_load[@]}") | $(median "${redis_load[@]}") |" \
		"$(median "${load_ratio[@]}") ($(printf '%s\n' "${load_ratio[@]}" | sort -n | head -1)–$(printf '%s\n' "${load_ratio[@]}" | sort -n | tail -1)) |" \
		"$(cpu_cells "${moond_cpu[@]}") | $(cpu_cells "${redis_cpu[@]}") | $moond_keys, $redis_keys |"
	echo
	echo "| -P 1, -c $CLIENTS, -r $KEYSPACE | rps | p50 ms | p99 ms | checkpoints finished during the run |"
	echo "|---|---:|---:|---:|---:|"
	for t in get set; do
		T=${t^^}
		echo "| $T, no checkpoint | $(col "${R[$t.off]}" 1) | $(col "${R[$t.off]}" 2) | $(col "${R[$t.off]}" 3) | 0 |"
		echo "| $T, checkpoints running | $(col "${R[$t.on]}" 1) | $(col "${R[$t.on]}" 2) | $(col "${R[$t.on]}" 3) | $(col "${R[$t.on]}" 4) |"
	done
	echo
	echo "| checkpoint over cold pages after a restart (kill -9) | seconds | pages read | read rounds | pages spilled |"
	echo "|---|---:|---:|---:|---:|"
	echo "| BGSAVE after DEL of $COLD_KEYS keys of 1800 bytes on $COLD_PAGES pages | $(median "${cold_t[@]}") | $cold_loaded | $cold_rounds | $cold_spilled |"
	echo
	echo "Keys after the tail restart: $keys. Commands: \`moond --shards 1 --checkpoint-timeout 86400 --max-wal-size 1000gb\`," \
		"keys loaded with \`redis-cli --pipe\` (SET key:%012d), \`redis-benchmark -t get|set -P 1 -c $CLIENTS -n $REQUESTS -r $KEYSPACE -d $DATA_SIZE --csv\`."
} >"$WORK/section.md"
cat "$WORK/section.md"
write_section "$BENCH_MD" "$MARK_START" "$MARK_END" "$WORK/section.md" "Checkpoint: restart time and latency"
log "wrote the bench-checkpoint section of $BENCH_MD"
