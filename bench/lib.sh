# lib.sh: what the bench scripts share. Source it; it defines functions only.

# log MESSAGE: a timestamped line on standard error, prefixed with the
# script's BENCH_TAG; die MESSAGE: log it as an error and exit.
log() { printf '[%s %(%H:%M:%S)T] %s\n' "${BENCH_TAG:-bench}" -1 "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# write_section FILE START END SECTION HEADING: put the contents of the file
# SECTION between the marker lines START and END of the Markdown file FILE,
# replacing what was there, or append them under "## HEADING" when FILE has
# no such markers yet.
write_section() {
	local file=$1 start=$2 end=$3 section=$4 heading=$5 tmp
	if grep -qxF "$start" "$file" 2>/dev/null && grep -qxF "$end" "$file"; then
		tmp=$(mktemp)
		awk -v s="$start" -v e="$end" -v f="$section" '
			$0 == s { print; while ((getline l < f) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip { print }' "$file" >"$tmp" && cat "$tmp" >"$file"
		rm -f "$tmp"
	else
		{ echo; echo "## $heading"; echo; echo "$start"; cat "$section"; echo "$end"; } >>"$file"
	fi
}

# The paired-round figures: median, lowest and highest of a list of numbers
# on standard input (space or line separated).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
lo() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
hi() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }

# ratios A B: the per-round ratios of two lists of figures, a / b.
ratios() {
	local -a a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	for i in "${!a[@]}"; do
		awk -v x="${a[$i]}" -v y="${b[$i]:-0}" 'BEGIN {if (y > 0) printf "%.4f ", x / y}'
	done
}

# per_request RATE CPU0 CPU1 N: prints "RATE user_us sys_us", the CPU ticks
# between CPU0 and CPU1 per one of N requests.
per_request() {
	local hz=${TICK:-$(getconf CLK_TCK)}
	awk -v r="$1" -v a="$2" -v b="$3" -v hz="$hz" -v n="$4" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%s %.3f %.3f\n", r, (y[1] - x[1]) / hz * 1e6 / n, (y[2] - x[2]) / hz * 1e6 / n }'
}


# pair_setup SHARDS: the moond/redis-server pair of a paired-round script,
# for the caller's WORK (a fresh directory), MOOND_BIN, SERVER_CPU and die:
# PID and PORT by server, a trap that stops both and removes WORK, and the
# functions below. moond runs with --shards SHARDS; both servers get the
# flags in the caller's PAIR_ARGS array, if any.
pair_setup() {
	PAIR_SHARDS=$1
	[ -n "${PAIR_ARGS+set}" ] || PAIR_ARGS=() # flags both servers take (--maxmemory ...)
	declare -gA PID=() PORT=([moond]=$((21000 + RANDOM % 4000)) [redis]=$((25000 + RANDOM % 4000)))
	trap pair_cleanup EXIT
}

pair_cleanup() {
	for s in moond redis; do
		[ -n "${PID[$s]:-}" ] && kill -9 "${PID[$s]}" 2>/dev/null
	done
	rm -rf "$WORK"
}

cli() { redis-cli -p "${PORT[$1]}" "${@:2}"; }

# start SERVER: a fresh server with no persistence (the rows measure the
# commands, not the disk), pinned to SERVER_CPU.
start() {
	local s=$1
	rm -rf "${WORK:?}/$s" && mkdir -p "$WORK/$s"
	if [ "$s" = moond ]; then
		taskset -c "$SERVER_CPU" "$MOOND_BIN" --port "${PORT[$s]}" --dir "$WORK/$s" --shards "$PAIR_SHARDS" \
			--appendonly no "${PAIR_ARGS[@]}" >"$WORK/$s.log" 2>&1 &
	else
		taskset -c "$SERVER_CPU" redis-server --port "${PORT[$s]}" --dir "$WORK/$s" --save '' --appendonly no \
			"${PAIR_ARGS[@]}" >"$WORK/$s.log" 2>&1 &
	fi
	PID[$s]=$!
	await_ping "$s"
}

# await_ping SERVER: wait (10 s at most) until SERVER, just started, answers
# PING; else show its log and die.
await_ping() {
	for _ in $(seq 200); do
		[ "$(cli "$1" ping 2>/dev/null)" = PONG ] && return
		sleep 0.05
	done
	cat "$WORK/$1.log" >&2
	die "$1 did not start"
}

stop() {
	kill -9 "${PID[$1]}" 2>/dev/null || true
	wait "${PID[$1]}" 2>/dev/null || true
	PID[$1]=""
}

# cpu SERVER: "user system" CPU ticks of the server so far.
cpu() { awk '{print $14, $15}' "/proc/${PID[$1]}/stat"; }
