#!/usr/bin/env bash
# redis_compare.sh: moond and redis-server side by side, driven by
# redis-benchmark, both servers pinned to the same CPU and the load generator
# to another. The plain (appendonly no) throughput rows also run a third
# server, moond on its portable pool I/O backend (--io-backend pool), so the
# gap between the backends shows in the same table (POOL_ROWS=0 skips it).
# Writes a Markdown report between the bench-redis markers of BENCHMARKS.md.
# See bench/README.md for what each row means.
#
# Knobs (environment):
#   RUNS                 paired rounds per row (default 7): every server runs
#                        once a round, the order rotating; the ratio is taken
#                        per round and reported as median and range
#   REQUESTS             requests per run, -P 1 rows (default 500000)
#   REQUESTS_PIPELINED   requests per run, -P 16 rows (default 4 x REQUESTS)
#   REQUESTS_DURABLE     requests per run, appendonly -P 1 rows (default REQUESTS)
#   KEYSPACE             -r for the rows, and keys loaded for memory/restart (default 1000000)
#   CLIENTS              -c (default 50); DATA_SIZE -d (default 64)
#   MIX_SET_CLIENTS / MIX_GET_CLIENTS   connections of the two mix streams (5 / 50)
#   SERVER_CPU / CLIENT_CPU   taskset CPUs (default 0 / 1)
#   IO_BACKEND           moond --io-backend (default auto)
#   POOL_ROWS            which plain rows also run moond --io-backend pool
#                        ("moond-pool" columns): 1 = GET and SET at -P 1 and
#                        -P 16 (default; about 2-3 minutes more with the
#                        default counts), all = every appendonly-no row (MSET,
#                        INCR and the mix too; about 5-6 minutes more), 0 = none
#                        (no third server; the table is as before)
#   BENCH_MD             report file (default BENCHMARKS.md at the repository root)
#   BENCH_DIR            scratch directory for the data dirs (default: mktemp -d)
#   KEEP_WORK=1          keep the scratch directory (server logs) afterwards
#   SKIP_BUILD=1         do not rebuild bin/moond
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

RUNS=${RUNS:-7}
REQUESTS=${REQUESTS:-500000}
REQUESTS_PIPELINED=${REQUESTS_PIPELINED:-$((REQUESTS * 4))}
REQUESTS_DURABLE=${REQUESTS_DURABLE:-$REQUESTS}
KEYSPACE=${KEYSPACE:-1000000}
CLIENTS=${CLIENTS:-50}
DATA_SIZE=${DATA_SIZE:-64}
MIX_SET_CLIENTS=${MIX_SET_CLIENTS:-5}
MIX_GET_CLIENTS=${MIX_GET_CLIENTS:-50}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
IO_BACKEND=${IO_BACKEND:-auto}
POOL_ROWS=${POOL_ROWS:-1}
READY_TIMEOUT=${READY_TIMEOUT:-60}
RESTART_TIMEOUT=${RESTART_TIMEOUT:-600}
BENCH_MD=${BENCH_MD:-$ROOT/BENCHMARKS.md}
MOOND_BIN=${MOOND_BIN:-$ROOT/bin/moond}
KEEP_WORK=${KEEP_WORK:-0}
SKIP_BUILD=${SKIP_BUILD:-0}

MARK_START='<!-- bench-redis:start -->'
MARK_END='<!-- bench-redis:end -->'
# The servers running now: start_pair sets it, moond-pool only in phase 1.
SERVERS=(moond redis)
POOL=moond-pool

declare -A PID=() PORT=() DIR=() AOF=() FSYNC=() CMDLINE=()
declare -A ROW_LABEL=() ROW_CMD=() ROW_NOTE=() ROW_POOL=()
ROWS=()
NOTES=()
WORK=""
STARTED_AT=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
T0=${EPOCHREALTIME//[.,]/}

# shellcheck source=bench/lib.sh
BENCH_TAG=bench-redis # log and die (lib.sh) prefix their lines with it
. bench/lib.sh

# now_us: microseconds since the epoch, without forking.
now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

# ---------------------------------------------------------------- setup

ensure_tools() {
	local missing=() sudo=()
	for c in redis-server redis-cli redis-benchmark; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	if ((${#missing[@]})); then
		log "installing redis-server and redis-tools (missing: ${missing[*]})"
		[ "$(id -u)" -eq 0 ] || sudo=(sudo)
		"${sudo[@]}" apt-get update -q
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server redis-tools
	fi
	for c in redis-server redis-cli redis-benchmark taskset awk go; do
		command -v "$c" >/dev/null || die "$c is needed and not installed"
	done
	if command -v memtier_benchmark >/dev/null; then
		NOTES+=("memtier_benchmark is installed but this script drives redis-benchmark only, so that every row uses one client.")
	fi
	local ncpu
	ncpu=$(nproc)
	if ((ncpu < 2)) && [ "$SERVER_CPU" != "$CLIENT_CPU" ]; then
		log "only $ncpu CPU: servers and load generator share CPU $SERVER_CPU"
		CLIENT_CPU=$SERVER_CPU
		NOTES+=("Only one CPU: the servers and the load generator shared it.")
	fi
}

build_moond() {
	if [ "$SKIP_BUILD" = 1 ]; then
		[ -x "$MOOND_BIN" ] || die "SKIP_BUILD=1 but $MOOND_BIN does not exist"
		return
	fi
	log "building $MOOND_BIN"
	go build -o "$MOOND_BIN" ./cmd/moond
}

cleanup() {
	local rc=$? s
	set +e
	for s in "${!PID[@]}"; do
		kill_server "$s"
	done
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		if [ "$KEEP_WORK" = 1 ]; then
			log "scratch directory kept: $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- servers

# free_port prints a TCP port on 127.0.0.1 that nothing listens on and that
# this script has not handed out.
free_port() {
	local p _ s taken lo=32768
	# Below the ephemeral range, so that no client socket holds the port.
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	((lo > 11000)) || lo=32768
	for _ in $(seq 200); do
		p=$((10000 + RANDOM % (lo - 10000)))
		taken=0
		for s in "${!PORT[@]}"; do
			[ "${PORT[$s]}" = "$p" ] && taken=1
		done
		((taken)) && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# cli SERVER ARGS...: redis-cli against SERVER, on the load generator's CPU.
cli() {
	local s=$1
	shift
	taskset -c "$CLIENT_CPU" redis-cli -h 127.0.0.1 -p "${PORT[$s]}" "$@"
}

info_field() { # SERVER SECTION FIELD
	cli "$1" INFO "$2" 2>/dev/null | tr -d '\r' | awk -F: -v f="$3" '$1 == f { print $2; exit }'
}

alive() { [ -n "${PID[$1]:-}" ] && kill -0 "${PID[$1]}" 2>/dev/null; }

# wait_ready SERVER TIMEOUT_S: poll PING until PONG and INFO persistence
# says loading:0, or fail at the deadline or when the process is gone.
wait_ready() {
	local s=$1 deadline=$(($(now_us) + $2 * 1000000)) out
	while :; do
		alive "$s" || return 1
		out=$(cli "$s" PING 2>/dev/null || true)
		if [ "$out" = PONG ] && [ "$(info_field "$s" persistence loading)" = 0 ]; then
			return 0
		fi
		(($(now_us) < deadline)) || return 1
		sleep 0.01
	done
}

# launch SERVER: start it with the settings in DIR/AOF/FSYNC, on a fresh
# port, pinned to SERVER_CPU. Does not wait.
launch() {
	local s=$1 port cmd=()
	port=$(free_port)
	PORT[$s]=$port
	case $s in
	moond | "$POOL")
		local backend=$IO_BACKEND
		[ "$s" = moond ] || backend=pool
		cmd=("$MOOND_BIN" --port "$port" --bind 127.0.0.1 --dir "${DIR[$s]}" --shards 1
			--io-backend "$backend" --appendonly "${AOF[$s]}" --appendfsync "${FSYNC[$s]}")
		;;
	redis)
		cmd=(redis-server --port "$port" --bind 127.0.0.1 --dir "${DIR[$s]}" --save ''
			--appendonly "${AOF[$s]}" --appendfsync "${FSYNC[$s]}" --daemonize no)
		;;
	esac
	CMDLINE[$s]="taskset -c $SERVER_CPU $(printf '%q ' "${cmd[@]}")"
	CMDLINE[$s]=${CMDLINE[$s]% }
	CMDLINE[$s]=${CMDLINE[$s]//--port $port/--port \$PORT}
	CMDLINE[$s]=${CMDLINE[$s]//$WORK/\$WORK}
	CMDLINE[$s]=${CMDLINE[$s]//$ROOT\//}
	taskset -c "$SERVER_CPU" "${cmd[@]}" >>"${DIR[$s]}/server.log" 2>&1 &
	PID[$s]=$!
}

# start_server SERVER APPENDONLY APPENDFSYNC DATADIR
start_server() {
	local s=$1 try
	AOF[$s]=$2
	FSYNC[$s]=$3
	DIR[$s]=$4
	mkdir -p "${DIR[$s]}"
	for try in 1 2 3; do
		launch "$s"
		if wait_ready "$s" "$READY_TIMEOUT"; then
			log "$s ready on port ${PORT[$s]} (pid ${PID[$s]}, appendonly ${AOF[$s]}, appendfsync ${FSYNC[$s]})"
			return 0
		fi
		log "$s did not become ready (try $try); log tail:"
		tail -n 5 "${DIR[$s]}/server.log" >&2 || true
		kill_server "$s"
	done
	die "$s does not start: see ${DIR[$s]}/server.log"
}

# wait_exit PID TIMEOUT_S
wait_exit() {
	local pid=$1 deadline=$(($(now_us) + $2 * 1000000))
	while kill -0 "$pid" 2>/dev/null; do
		(($(now_us) < deadline)) || return 1
		sleep 0.01
	done
}

# kill_server SERVER: SIGTERM, then SIGKILL if it lingers. Either server
# exits cleanly on SIGTERM (redis-server also fsyncs its AOF).
kill_server() {
	local s=$1 pid=${PID[$1]:-}
	[ -n "$pid" ] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait_exit "$pid" 30 || kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	unset "PID[$s]"
}

# stop_server SERVER: SHUTDOWN as a client would, then wait for the exit.
stop_server() {
	local s=$1 pid=${PID[$1]:-}
	[ -n "$pid" ] || return 0
	cli "$s" SHUTDOWN >/dev/null 2>&1 || true
	wait_exit "$pid" 60 || log "$s did not exit after SHUTDOWN; sending SIGTERM"
	kill_server "$s"
}

wal_active() { cli moond INFO persistence 2>/dev/null | grep -q '^wal_'; }

# gen_load N SIZE: the RESP stream of N SETs key:%012d -> SIZE bytes, the
# keys redis-benchmark's -r picks.
gen_load() {
	awk -v n="$1" -v size="$2" 'BEGIN {
		v = ""
		for (i = 0; i < size; i++) v = v "x"
		for (i = 0; i < n; i++)
			printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n%s\r\n", i, size, v
	}'
}

# preload SERVER: load KEYSPACE keys through redis-cli --pipe; check DBSIZE.
preload() {
	local s=$1 out keys t
	t=$(now_us)
	out=$(gen_load "$KEYSPACE" "$DATA_SIZE" | taskset -c "$CLIENT_CPU" redis-cli -h 127.0.0.1 -p "${PORT[$s]}" --pipe 2>&1) ||
		die "preloading $s failed: $out"
	grep -q "errors: 0, replies: $KEYSPACE" <<<"$out" || die "preloading $s: $out"
	keys=$(cli "$s" DBSIZE)
	log "$s: loaded $keys keys in $((($(now_us) - t) / 1000)) ms"
	[ "$keys" = "$KEYSPACE" ] || NOTES+=("$s: DBSIZE after loading $KEYSPACE keys is $keys.")
}

# wait_aof_rewrite SERVER: wait until redis-server has no AOF rewrite running
# or scheduled, so that the restart loads what a quiet server left.
wait_aof_rewrite() {
	local s=$1 deadline=$(($(now_us) + 300 * 1000000))
	while [ "$(info_field "$s" persistence aof_rewrite_in_progress)" = 1 ] ||
		[ "$(info_field "$s" persistence aof_rewrite_scheduled)" = 1 ]; do
		(($(now_us) < deadline)) || return 0
		sleep 0.05
	done
}

# ---------------------------------------------------------------- runs

RES=""
CLK_TCK=$(getconf CLK_TCK)

# record ROW SERVER LINE: one run's figures "rps p50 p99 [more]".
record() { echo "$3" >>"$RES/$1.$2"; }

fail() { # ROW SERVER RUN MESSAGE
	local msg st=0
	msg=$(grep -v '^"test",' <<<"$4" | tr '\n|' '  ' | cut -c1-200)
	log "$2 $1 run $3 failed: $msg"
	if ! alive "$2"; then
		wait "${PID[$2]}" 2>/dev/null || st=$?
		log "$2 is gone (exit status $st); last lines of its log:"
		tail -n 20 "${DIR[$2]}/server.log" >&2 || true
		msg="$msg [$2 exited with status $st, restarted empty]"
		unset "PID[$2]"
		start_server "$2" "${AOF[$2]}" "${FSYNC[$2]}" "${DIR[$2]}"
	fi
	echo "run $3: $msg" >>"$RES/$1.$2.err"
}

# parse_csv FILE: "rps p50 p99" from redis-benchmark --csv, by column name.
parse_csv() {
	tr -d '"\r' <"$1" | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		NF > 1 {
			p50 = ("p50_latency_ms" in col) ? $(col["p50_latency_ms"]) : "nan"
			p99 = ("p99_latency_ms" in col) ? $(col["p99_latency_ms"]) : "nan"
			last = $(col["rps"]) " " p50 " " p99
		}
		END { if (last == "") exit 1; print last }'
}

# rb OUT SERVER ARGS...: one redis-benchmark process on CLIENT_CPU.
rb() {
	local out=$1 s=$2
	shift 2
	taskset -c "$CLIENT_CPU" redis-benchmark -h 127.0.0.1 -p "${PORT[$s]}" --csv "$@" >"$out" 2>"$out.err"
}

rb_cmdline() { echo "taskset -c $CLIENT_CPU redis-benchmark -h 127.0.0.1 -p \$PORT --csv $*"; }

# cpu_ticks SERVER: the server process's "user system" CPU time so far, in
# clock ticks (/proc/PID/stat fields 14 and 15).
cpu_ticks() { awk '{ print $14, $15 }' "/proc/${PID[$1]}/stat" 2>/dev/null || echo 0 0; }

# record_cpu ROW SERVER TICKS0 US0 REQUESTS: the server's user and system
# CPU time per request since TICKS0 (in µs), and how busy its CPU was
# since US0 (percent), as "user sys busy". When the server's CPU is below
# 100% busy, the load generator was the limit.
record_cpu() {
	local t1 us1
	t1=$(cpu_ticks "$2")
	us1=$(now_us)
	awk -v a="$3" -v b="$t1" -v hz="$CLK_TCK" -v n="$5" -v wall=$((us1 - $4)) 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		u = (y[1] - x[1]) * 1e6 / hz; s = (y[2] - x[2]) * 1e6 / hz
		if (n > 0 && wall > 0) printf "%.3f %.3f %.1f\n", u / n, s / n, 100 * (u + s) / wall }' >>"$RES/$1.$2.cpu"
}

# req_count ARGS...: the -n of redis-benchmark arguments.
req_count() {
	while [ $# -gt 1 ]; do
		[ "$1" = -n ] && {
			echo "$2"
			return
		}
		shift
	done
	echo 0
}

valid() { [[ $1 =~ ^[0-9.]+\ [0-9.na]+\ [0-9.na]+ ]] && [[ ${1%% *} != 0* ]]; }

# measure ROW SERVER RUN ARGS...
measure() {
	local row=$1 s=$2 run=$3 out line t0 us0
	shift 3
	out="$WORK/out.csv"
	t0=$(cpu_ticks "$s")
	us0=$(now_us)
	if rb "$out" "$s" "$@" && line=$(parse_csv "$out") && valid "$line"; then
		record_cpu "$row" "$s" "$t0" "$us0" "$(req_count "$@")"
		record "$row" "$s" "$line"
		ROUND[$s]=${line%% *}
	else
		fail "$row" "$s" "$run" "$(cat "$out.err" "$out" 2>/dev/null | head -c 400)"
	fi
}

# measure_mix ROW SERVER RUN: SET and GET streams at 1:10 requests and
# connections, two redis-benchmark processes at once; throughput is all
# requests over the wall time of both.
measure_mix() {
	local row=$1 s=$2 run=$3 nset nget t0 t1 pset pget rset=0 rget=0 lset lget
	nset=$((REQUESTS / 11))
	nget=$((REQUESTS - nset))
	local ticks0
	ticks0=$(cpu_ticks "$s")
	t0=$(now_us)
	rb "$WORK/mixset.csv" "$s" -t set -n "$nset" -c "$MIX_SET_CLIENTS" -P 1 -d "$DATA_SIZE" -r "$KEYSPACE" &
	pset=$!
	rb "$WORK/mixget.csv" "$s" -t get -n "$nget" -c "$MIX_GET_CLIENTS" -P 1 -d "$DATA_SIZE" -r "$KEYSPACE" &
	pget=$!
	wait "$pset" || rset=$?
	wait "$pget" || rget=$?
	t1=$(now_us)
	if ((rset == 0 && rget == 0)) && lset=$(parse_csv "$WORK/mixset.csv") && lget=$(parse_csv "$WORK/mixget.csv") &&
		valid "$lset" && valid "$lget"; then
		local rps set_lat get_lat
		rps=$(awk -v n=$((nset + nget)) -v us=$((t1 - t0)) 'BEGIN { printf "%.2f", n * 1e6 / us }')
		get_lat=${lget#* }
		set_lat=${lset#* }
		record_cpu "$row" "$s" "$ticks0" "$t0" $((nset + nget))
		record "$row" "$s" "$rps $get_lat $set_lat"
		ROUND[$s]=$rps
	else
		fail "$row" "$s" "$run" "$(cat "$WORK"/mixset.csv.err "$WORK"/mixget.csv.err "$WORK"/mixset.csv "$WORK"/mixget.csv 2>/dev/null | head -c 400)"
	fi
}

# pool_row ID: whether row ID also runs moond-pool (it is running and
# POOL_ROWS selects the row).
pool_row() {
	[ -n "${PID[$POOL]:-}" ] || return 1
	case $POOL_ROWS in
	all) return 0 ;;
	1) [[ $1 =~ ^(get|set)_p(1|16)$ ]] ;;
	*) return 1 ;;
	esac
}

# ROUND holds each server's rps of the round being run, by server.
declare -A ROUND=()

# record_ratio ROW SERVER: SERVER's rps over redis's in this round, when
# both runs of the round succeeded; a failed run leaves its round out.
record_ratio() {
	[ -n "${ROUND[$2]:-}" ] && [ -n "${ROUND[redis]:-}" ] || return 0
	awk -v a="${ROUND[$2]}" -v b="${ROUND[redis]}" 'BEGIN { if (b > 0) printf "%.4f\n", a / b }' >>"$RES/$1.$2.ratio"
}

# run_row ID LABEL NOTE ARGS...: RUNS paired rounds, each server once a
# round, rotating which server goes first: moond,redis / redis,moond / ..., and with moond-pool
# moond,redis,moond-pool / redis,moond-pool,moond / moond-pool,moond,redis /
# ... (moond and redis keep the same order between them either way). ARGS
# "mix" runs the mix; anything else is passed to redis-benchmark.
run_row() {
	local id=$1 label=$2 note=$3 i j s order servers=(moond redis)
	shift 3
	ROWS+=("$id")
	if pool_row "$id"; then
		servers+=("$POOL")
		ROW_POOL[$id]=1
	fi
	ROW_LABEL[$id]=$label
	ROW_NOTE[$id]=$note
	if [ "$1" = mix ]; then
		local nset=$((REQUESTS / 11))
		ROW_CMD[$id]="$(rb_cmdline -t set -n "$nset" -c "$MIX_SET_CLIENTS" -P 1 -d "$DATA_SIZE" -r "$KEYSPACE") & $(rb_cmdline -t get -n $((REQUESTS - nset)) -c "$MIX_GET_CLIENTS" -P 1 -d "$DATA_SIZE" -r "$KEYSPACE") & wait"
	else
		ROW_CMD[$id]=$(rb_cmdline "$@")
	fi
	log "row $label"
	for ((i = 1; i <= RUNS; i++)); do
		order=()
		for ((j = 0; j < ${#servers[@]}; j++)); do
			order+=("${servers[(i - 1 + j) % ${#servers[@]}]}")
		done
		ROUND=()
		for s in "${order[@]}"; do
			if [ "$1" = mix ]; then
				measure_mix "$id" "$s" "$i"
			else
				measure "$id" "$s" "$i" "$@"
			fi
		done
		record_ratio "$id" moond
		[ -z "${ROW_POOL[$id]:-}" ] || record_ratio "$id" "$POOL"
	done
	for s in "${servers[@]}"; do
		[ -f "$RES/$id.$s" ] && log "  $s: $(tr '\n' ';' <"$RES/$id.$s")"
	done
	return 0
}

# ---------------------------------------------------------------- phases

start_pair() { # APPENDONLY APPENDFSYNC PHASE [EXTRA SERVER...]
	local s
	SERVERS=(moond redis "${@:4}")
	SERVER_CMDS+=("# $3")
	for s in "${SERVERS[@]}"; do
		start_server "$s" "$1" "$2" "$WORK/$3/$s"
		SERVER_CMDS+=("${CMDLINE[$s]}")
	done
	MOOND_BACKEND_USED=$(info_field moond server io_backend)
}

stop_pair() {
	local s
	for s in "${SERVERS[@]}"; do
		stop_server "$s"
	done
}

SERVER_CMDS=()
declare -A MEM=()

measure_memory() { # SERVER: before/after a KEYSPACE-key load
	local s=$1 before after keys
	before=$(info_field "$s" memory used_memory)
	preload "$s"
	keys=$(cli "$s" DBSIZE)
	after=$(info_field "$s" memory used_memory)
	MEM[$s.keys]=$keys
	MEM[$s.used]=$after
	MEM[$s.perkey]=$(((after - before) / (keys > 0 ? keys : 1)))
	# MEMORY PURGE: moond collects its Go heap and returns the free part
	# (debug.FreeOSMemory); redis-server purges jemalloc's dirty pages,
	# which leaves used_memory as it was.
	cli "$s" MEMORY PURGE >/dev/null
	MEM[$s.used_gc]=$(info_field "$s" memory used_memory)
	MEM[$s.perkey_gc]=$(((MEM[$s.used_gc] - before) / (keys > 0 ? keys : 1)))
	MEM[$s.rss]=$(($(ps -o rss= -p "${PID[$s]}" | tr -d ' ') * 1024))
	MEM[$s.info_rss]=$(info_field "$s" memory used_memory_rss)
	log "$s memory: used_memory ${MEM[$s.used]} (${MEM[$s.perkey]} B/key), RSS ${MEM[$s.rss]}"
}

# measure_memory_after SERVER: used_memory, RSS and keys once the
# throughput rows have overwritten the loaded values many times.
measure_memory_after() {
	local s=$1
	MEM[$s.after_keys]=$(cli "$s" DBSIZE)
	MEM[$s.after_used]=$(info_field "$s" memory used_memory)
	MEM[$s.after_rss]=$(($(ps -o rss= -p "${PID[$s]}" | tr -d ' ') * 1024))
	log "$s memory after the rows: used_memory ${MEM[$s.after_used]}, RSS ${MEM[$s.after_rss]}, keys ${MEM[$s.after_keys]}"
}

phase_memory_and_throughput() {
	log "phase 1: no persistence (appendonly no)"
	if [ "$POOL_ROWS" = 0 ]; then
		start_pair no everysec plain
	else
		start_pair no everysec plain "$POOL"
		POOL_BACKEND_USED=$(info_field "$POOL" server io_backend)
	fi
	measure_memory moond
	measure_memory redis
	# moond-pool gets the same keys, so that its GETs hit too; the memory
	# rows stay moond (IO_BACKEND) against redis.
	[ "$POOL_ROWS" = 0 ] || preload "$POOL"
	local base=(-n "$REQUESTS" -c "$CLIENTS" -d "$DATA_SIZE" -r "$KEYSPACE")
	local piped=(-n "$REQUESTS_PIPELINED" -c "$CLIENTS" -d "$DATA_SIZE" -r "$KEYSPACE")
	run_row get_p1 "GET -P 1" "" -t get -P 1 "${base[@]}"
	run_row get_p16 "GET -P 16" "" -t get -P 16 "${piped[@]}"
	run_row set_p1 "SET -P 1" "" -t set -P 1 "${base[@]}"
	run_row set_p16 "SET -P 16" "" -t set -P 16 "${piped[@]}"
	run_row mset "MSET (10 keys) -P 1" "" -t mset -P 1 "${base[@]}"
	run_row incr "INCR -P 1" "" -t incr -P 1 "${base[@]}"
	run_row mix "SET:GET 1:10 -P 1" "mix" mix
	measure_memory_after moond
	measure_memory_after redis
	stop_pair
}

phase_durable() { # APPENDFSYNC
	local fs=$1 note=""
	log "phase: appendonly yes, appendfsync $fs"
	start_pair yes "$fs" "aof-$fs"
	if wal_active; then
		WAL_STATE[$fs]=active
	else
		WAL_STATE[$fs]="not active"
		note="moond: WAL not active"
	fi
	local dur=(-n "$REQUESTS_DURABLE" -c "$CLIENTS" -d "$DATA_SIZE" -r "$KEYSPACE")
	local piped=(-n "$REQUESTS_PIPELINED" -c "$CLIENTS" -d "$DATA_SIZE" -r "$KEYSPACE")
	run_row "set_p1_$fs" "SET -P 1, appendfsync $fs" "$note" -t set -P 1 "${dur[@]}"
	run_row "set_p16_$fs" "SET -P 16, appendfsync $fs" "$note" -t set -P 16 "${piped[@]}"
	stop_pair
}

declare -A RESTART=() WAL_STATE=()
RESTART_NOTE=""

phase_restart() {
	local s i t order
	log "phase: restart with $KEYSPACE keys (appendonly yes, appendfsync everysec)"
	start_pair yes everysec restart
	wal_active || RESTART_NOTE="moond: WAL not active"
	for s in "${SERVERS[@]}"; do
		preload "$s"
		[ "$s" = redis ] && wait_aof_rewrite "$s"
		RESTART[$s.before]=$(cli "$s" DBSIZE)
	done
	for ((i = 1; i <= RUNS; i++)); do
		if ((i % 2)); then order=(moond redis); else order=(redis moond); fi
		ROUND=()
		for s in "${order[@]}"; do
			stop_server "$s"
			t=$(now_us)
			launch "$s"
			if wait_ready "$s" "$RESTART_TIMEOUT"; then
				ROUND[$s]=$(awk -v us=$(($(now_us) - t)) 'BEGIN { printf "%.3f", us / 1e6 }')
				record restart "$s" "${ROUND[$s]}"
				# The boot's CPU: all the new process spent until it was ready.
				cpu_ticks "$s" | awk -v hz="$CLK_TCK" '{ printf "%.3f %.3f\n", $1 / hz, $2 / hz }' >>"$RES/restart.$s.cpu"
				RESTART[$s.after]=$(cli "$s" DBSIZE)
				log "$s restart $i: $(tail -n1 "$RES/restart.$s") s, ${RESTART[$s.after]} keys"
			else
				echo "run $i: not ready within ${RESTART_TIMEOUT}s" >>"$RES/restart.$s.err"
				tail -n 20 "${DIR[$s]}/server.log" >&2 || true
				kill_server "$s"
				start_server "$s" "${AOF[$s]}" "${FSYNC[$s]}" "${DIR[$s]}"
			fi
		done
		record_ratio restart moond
	done
	stop_pair
}

# ---------------------------------------------------------------- report

# col_median FILE FIELD: the median of column FIELD (1-based) over the lines.
col_median() {
	[ -s "$1" ] || {
		echo nan
		return
	}
	awk -v f="$2" '{ print $f }' "$1" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
			print m
		}'
}

# spread FILE: (max-min)/median of column 1, in percent.
spread() {
	[ -s "$1" ] || {
		echo nan
		return
	}
	awk '{ print $1 }' "$1" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.0f", (m > 0) ? 100 * (v[NR] - v[1]) / m : 0
		}'
}

fmt_int() { # thousands separators
	awk -v x="$1" 'BEGIN {
		if (x == "nan" || x == "") { print "n/a"; exit }
		s = sprintf("%.0f", x); out = ""
		while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
		print s out
	}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }

# round_ratio FILE: "median (lowest–highest)" of the per-round ratios in
# FILE, or n/a when no round had both runs.
round_ratio() {
	[ -s "$1" ] || {
		echo "n/a"
		return
	}
	printf '%.2f (%.2f–%.2f)' "$(median <"$1")" "$(lo <"$1")" "$(hi <"$1")"
}

# cpu_cell FILE: "user / sys", the medians of a .cpu file's first two
# columns (µs per request; seconds for the restart rows).
cpu_cell() {
	[ -s "$1" ] || {
		echo "n/a"
		return
	}
	echo "$(col_median "$1" 1) / $(col_median "$1" 2)"
}

secs() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "n/a"; else printf "%.3f s", x }'; }

mb() { awk -v x="$1" 'BEGIN { if (x == "") print "n/a"; else printf "%.1f MB", x / 1048576 }'; }

lat() { # FILE: "p50 / p99"
	local a b
	a=$(col_median "$1" 2)
	b=$(col_median "$1" 3)
	if [ "$a" = nan ]; then echo "n/a"; else echo "$a / $b"; fi
}

errs() { # ROW SERVER
	local f="$RES/$1.$2.err" n
	[ -s "$f" ] || return 0
	n=$(grep -c '^run ' "$f")
	printf '%s: %s failure(s), first: %s' "$2" "$n" "$(head -n1 "$f" | cut -c1-160)"
}

# moond_version: the commit the binary was built from, "-dirty" when files
# other than BENCHMARKS.md (which this script rewrites) had changes.
moond_version() {
	local v
	v=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) || {
		echo '(no git)'
		return
	}
	git -C "$ROOT" diff --quiet HEAD -- . ':(exclude)BENCHMARKS.md' 2>/dev/null || v+="-dirty"
	echo "$v"
}

report_section() {
	local id s e m r p nproc model kernel gov rv joined pool_cols=0 pinned="Both servers" rotation="alternating" order_text="" loaded=""
	local -a note
	for id in "${ROWS[@]}"; do
		[ -z "${ROW_POOL[$id]:-}" ] || pool_cols=1
	done
	if ((pool_cols)); then
		pinned="All three servers (moond, redis-server, moond-pool)"
		rotation="rotating"
		order_text=" (moond, redis, moond-pool / redis, moond-pool, moond / moond-pool, moond, redis / ...; moond, redis / redis, moond / ... in rows without moond-pool)"
		loaded=" (and moond-pool's GET rows)"
	fi
	nproc=$(nproc)
	model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
	kernel=$(uname -sr)
	gov=$(go version | awk '{ print $3 }')
	rv=$(redis-server --version | awk '{ print $3 }')
	echo "## moond vs redis-server, side by side (\`make bench-redis\`)"
	echo
	echo "Written by \`bench/redis_compare.sh\` on $STARTED_AT; do not edit by hand, rerun the script."
	echo
	echo "Machine: $nproc CPUs, ${model:-CPU model not exposed}, $kernel, $gov, redis-server ${rv#v=}," \
		"moond $(moond_version) with io backend $MOOND_BACKEND_USED, load generator redis-benchmark."
	echo "Load average when the run started: $LOAD_START; when it ended: $(cut -d' ' -f1-3 /proc/loadavg)." \
		"Wall time: $((($(now_us) - T0) / 1000000)) s."
	echo
	echo "$pinned pinned to CPU $SERVER_CPU (\`taskset -c $SERVER_CPU\`), the load generator to CPU $CLIENT_CPU;" \
		"moond with \`--shards 1\`. Each row: $RUNS paired rounds, each server once a round, $rotation which server goes first$order_text;" \
		"the ratio is taken per round (both servers back to back, so a drifting host moves both) and reported as median and range; rps, CPU and latencies are medians of the rounds. $CLIENTS connections, $DATA_SIZE-byte values, random keys over $KEYSPACE (-r)." \
		"Latencies are redis-benchmark's p50 / p99 in ms."
	if ((pool_cols)); then
		echo "The moond-pool columns are moond on its portable \`pool\` I/O backend (\`--io-backend pool\`), the moond columns" \
			"moond on \`--io-backend $IO_BACKEND\` ($MOOND_BACKEND_USED in this run); see the notes below the tables."
	fi
	echo
	local cols="| row | moond rps | redis rps | moond/redis per round: median (range) | moond user / sys µs per request | redis user / sys µs per request | moond p50 / p99 ms | redis p50 / p99 ms |"
	local rule="|---|---:|---:|---:|---:|---:|---:|---:|"
	if ((pool_cols)); then
		cols+=" moond-pool rps | moond-pool/redis per round | moond-pool user / sys µs |"
		rule+="---:|---:|---:|"
	fi
	echo "$cols notes |"
	echo "$rule---|"
	for id in "${ROWS[@]}"; do
		local servers=(moond redis) pool_cells=""
		[ -z "${ROW_POOL[$id]:-}" ] || servers+=("$POOL")
		m=$(col_median "$RES/$id.moond" 1)
		r=$(col_median "$RES/$id.redis" 1)
		note=()
		[ "${ROW_NOTE[$id]}" = mix ] || [ -z "${ROW_NOTE[$id]}" ] || note+=("${ROW_NOTE[$id]}")
		if [ "${ROW_NOTE[$id]}" = mix ]; then
			e="p50/p99 of the GET stream; SET stream: moond $(col_median "$RES/$id.moond" 4) / $(col_median "$RES/$id.moond" 5), redis $(col_median "$RES/$id.redis" 4) / $(col_median "$RES/$id.redis" 5)"
			[ -z "${ROW_POOL[$id]:-}" ] || e+=", moond-pool $(col_median "$RES/$id.$POOL" 4) / $(col_median "$RES/$id.$POOL" 5)"
			note+=("$e")
		fi
		e="spread moond $(spread "$RES/$id.moond")%, redis $(spread "$RES/$id.redis")%"
		[ -z "${ROW_POOL[$id]:-}" ] || e+=", moond-pool $(spread "$RES/$id.$POOL")%"
		note+=("$e")
		for s in "${servers[@]}"; do
			e=$(errs "$id" "$s")
			[ -z "$e" ] || note+=("$e")
		done
		joined=$(printf '%s; ' "${note[@]}")
		if [ -n "${ROW_POOL[$id]:-}" ]; then
			p=$(col_median "$RES/$id.$POOL" 1)
			pool_cells=" $(fmt_int "$p") | $(round_ratio "$RES/$id.$POOL.ratio") | $(cpu_cell "$RES/$id.$POOL.cpu") |"
			joined+="moond-pool p50 / p99 $(lat "$RES/$id.$POOL") ms; "
		elif ((pool_cols)); then
			pool_cells="  |  |  |"
		fi
		echo "| ${ROW_LABEL[$id]} | $(fmt_int "$m") | $(fmt_int "$r") | $(round_ratio "$RES/$id.moond.ratio") |" \
			"$(cpu_cell "$RES/$id.moond.cpu") | $(cpu_cell "$RES/$id.redis.cpu") | $(lat "$RES/$id.moond") | $(lat "$RES/$id.redis") |$pool_cells ${joined%; } |"
	done
	echo
	echo "The CPU columns are each server's own accounting (\`/proc/PID/stat\` utime and stime) over the requests of a run, medians of the rounds." \
		"The table below gives how busy that made the server's CPU over the run's wall time: a server below 100% busy was waiting for the load generator," \
		"so its rps is the client's limit, and CPU per request is the fairer comparison of the two servers' speed." \
		"redis/moond above 1 means moond spends less CPU (user + system) per request."
	echo
	echo "| row | moond user + sys µs/req | redis user + sys µs/req | redis/moond | moond CPU busy | redis CPU busy |"
	echo "|---|---:|---:|---:|---:|---:|"
	for id in "${ROWS[@]}"; do
		local mc rc
		mc=$(awk '{ print $1 + $2 }' "$RES/$id.moond.cpu" 2>/dev/null | median)
		rc=$(awk '{ print $1 + $2 }' "$RES/$id.redis.cpu" 2>/dev/null | median)
		echo "| ${ROW_LABEL[$id]} | $mc | $rc | $(ratio "$rc" "$mc") | $(col_median "$RES/$id.moond.cpu" 3)% | $(col_median "$RES/$id.redis.cpu" 3)% |"
	done
	echo
	echo "\"spread\" is (max - min) / median of the runs' rps." \
		"Rows with appendfsync measure moond's durability only once \`INFO persistence\` shows \`wal_\` fields;" \
		"until then moond accepts \`--appendonly\`/\`--appendfsync\` and does nothing with them, and the note says \"moond: WAL not active\"." \
		"In this run moond's WAL was ${WAL_STATE[everysec]:-?} under everysec and ${WAL_STATE[always]:-?} under always."
	echo
	echo "| memory and restart | moond | redis | moond/redis | notes |"
	echo "|---|---:|---:|---:|---|"
	echo "| keys loaded (DBSIZE) | $(fmt_int "${MEM[moond.keys]}") | $(fmt_int "${MEM[redis.keys]}") | | $KEYSPACE SETs of $DATA_SIZE-byte values via \`redis-cli --pipe\` |"
	echo "| used_memory after loading | $(mb "${MEM[moond.used]}") | $(mb "${MEM[redis.used]}") | $(ratio "${MEM[moond.used]}" "${MEM[redis.used]}") | INFO memory; moond's is the Go heap's object bytes, garbage not yet collected included |"
	echo "| used_memory per key | ${MEM[moond.perkey]} B | ${MEM[redis.perkey]} B | $(ratio "${MEM[moond.perkey]}" "${MEM[redis.perkey]}") | (after - before loading) / keys, as INFO reported it after the load |"
	echo "| used_memory per key after a forced GC | ${MEM[moond.perkey_gc]} B | ${MEM[redis.perkey_gc]} B | $(ratio "${MEM[moond.perkey_gc]}" "${MEM[redis.perkey_gc]}") | the same after MEMORY PURGE (moond: a full collection; redis-server: jemalloc's purge, used_memory unchanged) |"
	echo "| RSS after loading | $(mb "${MEM[moond.rss]}") | $(mb "${MEM[redis.rss]}") | $(ratio "${MEM[moond.rss]}" "${MEM[redis.rss]}") | ps -o rss |"
	echo "| used_memory after the appendonly-no rows | $(mb "${MEM[moond.after_used]}") | $(mb "${MEM[redis.after_used]}") | $(ratio "${MEM[moond.after_used]}" "${MEM[redis.after_used]}") | keys then: moond $(fmt_int "${MEM[moond.after_keys]}"), redis $(fmt_int "${MEM[redis.after_keys]}"); the SET, MSET, INCR and mix rows overwrite values: Redis frees an old value at once, moond's Go heap keeps it until the next collection (GOGC 100: up to as much again as the live heap) |"
	echo "| RSS after the appendonly-no rows | $(mb "${MEM[moond.after_rss]}") | $(mb "${MEM[redis.after_rss]}") | $(ratio "${MEM[moond.after_rss]}" "${MEM[redis.after_rss]}") | ps -o rss |"
	m=$(col_median "$RES/restart.moond" 1)
	r=$(col_median "$RES/restart.redis" 1)
	note=("appendonly yes, appendfsync everysec; SHUTDOWN, start, time until PING answers PONG and INFO persistence says loading:0; median of $RUNS paired rounds, the ratio per round (below 1: moond restarted faster)")
	[ -z "$RESTART_NOTE" ] || note+=("$RESTART_NOTE")
	for s in "${SERVERS[@]}"; do
		e=$(errs restart "$s")
		[ -z "$e" ] || note+=("$e")
	done
	local rratio
	rratio=$(ratio "$m" "$r")
	for s in "${SERVERS[@]}"; do
		if [ "${RESTART[$s.after]:-}" != "${RESTART[$s.before]:-}" ]; then
			rratio="n/a"
			note+=("$s came back with ${RESTART[$s.after]:-no} of ${RESTART[$s.before]:-?} keys, so its time is not a restart with data")
		fi
	done
	joined=$(printf '%s; ' "${note[@]}")
	[ "$rratio" = n/a ] || rratio="$(round_ratio "$RES/restart.moond.ratio") per round"
	note+=("boot CPU user / sys s: moond $(cpu_cell "$RES/restart.moond.cpu"), redis $(cpu_cell "$RES/restart.redis.cpu")")
	joined=$(printf '%s; ' "${note[@]}")
	echo "| restart time with $(fmt_int "$KEYSPACE") keys | $(secs "$m") | $(secs "$r") | $rratio | ${joined%; } |"
	echo "| keys after restart | $(fmt_int "${RESTART[moond.after]:-}") | $(fmt_int "${RESTART[redis.after]:-}") | | before: moond $(fmt_int "${RESTART[moond.before]:-}"), redis $(fmt_int "${RESTART[redis.before]:-}") |"
	echo
	echo "Notes:"
	echo
	echo "- The machine is shared: other builds and tests run on the same CPUs during the run, so the figures are noisy;" \
		"compare ratios within one run, and look at the spread column before trusting a difference of a few percent."
	echo "- One CPU for the load generator: where both servers reach about the same rps at -P 16, redis-benchmark is the limit, not the server."
	echo "- The GET rows read the $KEYSPACE keys loaded for the memory rows (hits). The SET rows overwrite them;" \
		"the appendfsync rows start from an empty keyspace and mostly insert."
	echo "- The 1:10 SET:GET mix: redis-benchmark runs one command per test, so it is two redis-benchmark processes at once," \
		"SET with $MIX_SET_CLIENTS connections and $((REQUESTS / 11)) requests, GET with $MIX_GET_CLIENTS connections and $((REQUESTS - REQUESTS / 11)) requests" \
		"(1:10 in both); its rps is all requests over the wall time of both processes."
	echo "- redis-server runs with its defaults plus \`--save ''\`; with appendonly yes that includes automatic AOF rewrites," \
		"which fork on the same CPU. Before the restart measure the script waits until no rewrite is running."
	if ((pool_cols)); then
		echo "- moond-pool is the same moond binary with \`--io-backend pool\`: the portable I/O backend, which builds on every OS" \
			"and is what \`auto\` falls back to where io_uring is unavailable. It serves sockets on Go's netpoller (one goroutine" \
			"per pending operation) and files on a bounded pool of worker goroutines, and hands completions back to the shard's loop" \
			"through a queue and a wake-up channel; the uring backend instead runs one io_uring per shard loop, so its loop submits" \
			"and reaps I/O itself. moond-pool ran in the plain (appendonly no) phase only, alongside the other two, with the same" \
			"flags otherwise, on the same CPU, loaded with the same $KEYSPACE keys, in the same run rotation; empty moond-pool cells" \
			"are rows it did not run (POOL_ROWS=$POOL_ROWS). moond-pool/redis next to moond/redis is the gap between the backends." \
			"While one server is measured the others are idle on the same CPU."
		if [ "${POOL_BACKEND_USED:-pool}" != pool ]; then
			echo "- moond-pool's INFO server said io_backend:$POOL_BACKEND_USED, not pool: its columns are not the pool backend's."
		fi
		if [ "$MOOND_BACKEND_USED" = pool ]; then
			echo "- moond itself ran on the pool backend in this run (io_backend:pool), so the moond and moond-pool columns measure the same backend."
		fi
	fi
	for e in "${NOTES[@]}"; do
		echo "- $e"
	done
	echo
	echo "Commands (\$PORT is the free port picked at run time, \$WORK the scratch directory):"
	echo
	echo '```'
	for e in "${SERVER_CMDS[@]}"; do
		echo "$e"
	done
	echo "# data for the memory, GET and restart rows$loaded: $KEYSPACE x SET key:%012d <$DATA_SIZE bytes>, generated by awk"
	echo "awk ... | taskset -c $CLIENT_CPU redis-cli -h 127.0.0.1 -p \$PORT --pipe"
	for id in "${ROWS[@]}"; do
		echo "# ${ROW_LABEL[$id]}"
		echo "${ROW_CMD[$id]}"
	done
	echo '```'
}

write_markdown() { # SECTION_FILE
	local sec=$1 tmp
	tmp=$(mktemp "$WORK/md.XXXXXX")
	if [ -f "$BENCH_MD" ] && grep -qxF "$MARK_START" "$BENCH_MD" && grep -qxF "$MARK_END" "$BENCH_MD"; then
		awk -v start="$MARK_START" -v end="$MARK_END" -v secfile="$sec" '
			$0 == start { print; while ((getline line < secfile) > 0) print line; skip = 1; next }
			$0 == end { skip = 0 }
			!skip { print }' "$BENCH_MD" >"$tmp"
	else
		{
			[ -f "$BENCH_MD" ] && cat "$BENCH_MD" && echo
			echo "$MARK_START"
			cat "$sec"
			echo "$MARK_END"
		} >"$tmp"
	fi
	cat "$tmp" >"$BENCH_MD"
	log "wrote the bench-redis section of $BENCH_MD"
}

main() {
	case $POOL_ROWS in
	0 | 1 | all) ;;
	*) die "POOL_ROWS=$POOL_ROWS: use 1 (GET/SET -P 1/-P 16), all (every appendonly-no row) or 0 (none)" ;;
	esac
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	ensure_tools
	build_moond
	WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/moond-bench.XXXXXX")}
	mkdir -p "$WORK"
	RES="$WORK/results"
	mkdir -p "$RES"
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	log "scratch directory $WORK; RUNS=$RUNS REQUESTS=$REQUESTS REQUESTS_PIPELINED=$REQUESTS_PIPELINED KEYSPACE=$KEYSPACE POOL_ROWS=$POOL_ROWS"

	phase_memory_and_throughput
	phase_durable everysec
	phase_durable always
	phase_restart

	report_section >"$WORK/section.md"
	write_markdown "$WORK/section.md"
	cat "$WORK/section.md"
}

MOOND_BACKEND_USED=$IO_BACKEND
POOL_BACKEND_USED=""
LOAD_START=""
main "$@"
