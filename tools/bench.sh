#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop benchmark: the per-drop cost of udpdrop's BPF program (top, and
# record writing every drop's event), side by side with an empty program on
# the same tracepoint (the floor), with bpftrace counting drop reasons, and
# with nothing attached; for 1, 2, 4 ... up to the CPU count concurrent
# senders; then udpdrop's start-up: launch to the first counted drop.
#
# The load is a loopback drop storm (tools/bench/storm.c): a receiver on
# 127.0.0.1 with a tiny SO_RCVBUF that never reads, flooded with sendmmsg
# by K sender threads, each pinned to its own CPU (loopback drops in the
# sender's softirq: K CPUs drop at once). Every configuration runs once per
# round and sender count, rounds interleaved (the order rotates), and the
# table shows medians over rounds: on a shared, noisy machine only ratios
# measured side by side mean anything.
#
#   tools/bench.sh          (or: make bench)
#   ROUNDS=5 SECS=3 SENDERS="1 2" STARTS=5 PORT=0 tools/bench.sh
#   BASELINE=/path/to/old/udpdrop tools/bench.sh   (adds top@base, record@base:
#                                                   the same rounds, an older build)
#   BPFTRACE=none tools/bench.sh                   (leaves bpftrace out)
#   RECORD_VARIANTS="zlib alone" tools/bench.sh    (adds record@zlib: --compression
#                                                   zlib; record@alone: no helper
#                                                   threads, UDPDROP_PACK_THREADS=0)
#
# `record` is udpdrop record writing every drop's event to a file: its
# rounds give the storm's rate with it attached and the events it shed;
# then one sustained storm of RECORD_SECS (30), with as many senders as
# CPUs, is recorded for the writer's events/s, what it shed and the file's
# bytes per event.
#
# Start-up: with a one-sender storm running, `udpdrop record` is launched
# STARTS times; the time from exec to its first event (the first drop it
# counted: every counted drop is an event) is taken from the trace, and
# udpdrop -v's own "attached ... after N ms" line gives the part up to the
# attach.
#
# Needs root (BPF, kernel.bpf_stats_enabled), bpftool, jq and perl; bpftrace
# is optional. Traffic stays on 127.0.0.1. Benchmarks only: no test asserts
# a timing.
set -euo pipefail

cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
RECORD_SECS=${RECORD_SECS:-30}
STARTS=${STARTS:-5}
PORT=${PORT:-0}
UDPDROP=${UDPDROP:-./udpdrop}
BASELINE=${BASELINE:-}
# the benchmark's own programs (make bench builds them; a bundle made by
# tools/bench-bundle.sh names its own)
TRACECAT=${TRACECAT:-.output/tests/tracecat}
FLOOR=${FLOOR:-.output/bench-floor}
STORM_GIVEN=${STORM:+yes} # a storm named by the caller is used as it is
STORM=${STORM:-.output/bench-storm}
STORM_SRC=tools/bench/storm.c
BPFTRACE=${BPFTRACE:-$(command -v bpftrace || true)}
bpftrace_skipped="not installed (make deps)"
if [[ $BPFTRACE == none ]]; then # BPFTRACE=none: leave bpftrace out
	BPFTRACE=
	bpftrace_skipped="BPFTRACE=none"
fi
BT_PROG='tracepoint:skb:kfree_skb { @[args->reason] = count(); }'
READY_TIMEOUT=${READY_TIMEOUT:-60} # seconds for a tool to attach (the verifier takes seconds on a busy machine)

die() {
	echo "bench: $*" >&2
	exit 1
}

# ---- preconditions --------------------------------------------------------

[[ $(id -u) -eq 0 ]] || die "needs root (BPF programs, kernel.bpf_stats_enabled)"
command -v bpftool >/dev/null || die "bpftool not found (make deps)"
command -v jq >/dev/null || die "jq not found (make deps)"
[[ -x $UDPDROP ]] || die "$UDPDROP missing: run make udpdrop .output/bench-floor (or make bench)"
[[ -x $FLOOR ]] || die "$FLOOR missing: run make .output/bench-floor (or make bench)"
[[ -x $TRACECAT ]] || die "$TRACECAT missing: run make $TRACECAT (or make bench)"
[[ -z $BASELINE || -x $BASELINE ]] || die "BASELINE=$BASELINE is not an executable"
command -v perl >/dev/null || die "perl not found (the start-up clock)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ $SECS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "SECS must be a number of seconds"
if [[ -n $STORM_GIVEN ]]; then
	[[ -x $STORM ]] || die "STORM=$STORM is not an executable"
elif [[ ! -x $STORM || $STORM_SRC -nt $STORM ]]; then
	mkdir -p "$(dirname "$STORM")"
	cc -O2 -pthread -o "$STORM" "$STORM_SRC" || die "cannot build $STORM"
fi
NCPU=$(nproc)
# 1, 2, 4 ... and the CPU count
if [[ -z ${SENDERS:-} ]]; then
	SENDERS=
	for ((k = 1; k < NCPU; k *= 2)); do SENDERS+="$k "; done
	SENDERS+=$NCPU
fi
for k in $SENDERS; do
	[[ $k =~ ^[1-9][0-9]*$ ]] || die "SENDERS must be positive integers: '$SENDERS'"
done

# ---- cleanup: every process we started, the sysctl, the scratch dir -------

work=$(mktemp -d /tmp/udpdrop-bench.XXXXXX)
started=()
stats_prev=
cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM
	((rc == 130 || rc == 143)) && echo "bench: interrupted, cleaning up" >&2
	for pid in "${started[@]}"; do
		kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${started[@]}"; do
		for _ in $(seq 20); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n $stats_prev ]]; then
		sysctl -qw kernel.bpf_stats_enabled="$stats_prev" ||
			echo "bench: cannot restore kernel.bpf_stats_enabled=$stats_prev" >&2
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

forget() { # drop a reaped pid from the cleanup list
	local keep=() p
	for p in "${started[@]}"; do
		[[ $p == "$1" ]] || keep+=("$p")
	done
	started=("${keep[@]}")
}

# ---- helpers ----------------------------------------------------------------

# A free UDP port on 127.0.0.1 (the storm binds it; udpdrop filters on it).
pick_port() {
	local p
	for _ in $(seq 50); do
		p=$((40000 + RANDOM % 20000))
		if [[ -z $(ss -Hlun "sport = :$p" 2>/dev/null) ]]; then
			echo "$p"
			return
		fi
	done
	die "no free UDP port found"
}

# Programs on skb:kfree_skb held by process $1 (tp_btf, raw_tp, tracepoint).
progs_of_pid() {
	bpftool perf show -j 2>/dev/null |
		jq -r --argjson p "$1" \
			'.[] | select(.pid == $p and .tracepoint == "kfree_skb") | .prog_id' |
		sort -un
}

# Programs on kfree_skb that are not ours: they slow the storm for everyone.
foreign_progs() { # $1: our ids, comma separated (may be empty)
	{
		bpftool perf show -j 2>/dev/null |
			jq -r '.[] | select(.tracepoint == "kfree_skb") | .prog_id'
		bpftool link show -j 2>/dev/null |
			jq -r '.[] | select(.tp_name? == "kfree_skb") | .prog_id'
	} | sort -un | grep -vxF -f <(tr ',' '\n' <<<"$1" | grep .) || true
}

# "run_time_ns run_cnt" summed over the ids in $1 (comma separated).
prog_stats() {
	bpftool prog show -j |
		jq -r --argjson ids "[$1]" \
			'[.[] | select(.id as $i | $ids | index($i))] |
			 "\(map(.run_time_ns // 0) | add // 0) \(map(.run_cnt // 0) | add // 0)"'
}

# CPU time of process $1 in ns, all its threads (schedstat: ns on CPU).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f\n", t }'
}

# Wait until file $2 contains pattern $3 while process $1 lives.
wait_for_line() {
	local pid=$1 file=$2 pat=$3 deadline=$((SECONDS + READY_TIMEOUT))
	while ! grep -q -- "$pat" "$file" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# Wait until process $1 holds a program on kfree_skb; prints the ids.
wait_for_progs() {
	local pid=$1 deadline=$((SECONDS + READY_TIMEOUT)) ids
	while :; do
		ids=$(progs_of_pid "$pid" | paste -sd, -)
		[[ -n $ids ]] && break
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
	echo "$ids"
}

# Keep only the ids (comma separated, $1) whose name starts with $2.
ids_named() {
	bpftool prog show -j |
		jq -r --argjson ids "[$1]" --arg pre "$2" \
			'.[] | select((.id as $i | $ids | index($i)) and (.name | startswith($pre))) | .id' |
		paste -sd, -
}

# bpftrace's tracepoint needs tracefs; when the host has none mounted, give
# bpftrace a private mount namespace with one (the host is not touched).
bpftrace_cmd=()
bpftrace_note=
if [[ -n $BPFTRACE ]]; then
	if [[ -d /sys/kernel/tracing/events/skb || -d /sys/kernel/debug/tracing/events/skb ]]; then
		bpftrace_cmd=("$BPFTRACE" -e "$BT_PROG")
	elif command -v unshare >/dev/null && grep -qw tracefs /proc/filesystems; then
		bpftrace_cmd=(unshare --mount --propagation private sh -c
			'mount -t tracefs nodev /sys/kernel/tracing && exec "$0" -e "$1"'
			"$BPFTRACE" "$BT_PROG")
		bpftrace_note="bpftrace ran in a private mount namespace with tracefs (not mounted on the host)"
	else
		bpftrace_note="bpftrace skipped: tracefs is not mounted and cannot be mounted privately"
	fi
else
	bpftrace_note="bpftrace skipped: $bpftrace_skipped"
fi

configs=(none floor top record)
((${#bpftrace_cmd[@]})) && configs+=(bpftrace)
[[ -n $BASELINE ]] && configs+=(top@base record@base)
for v in ${RECORD_VARIANTS:-}; do
	case $v in
	zlib | alone) configs+=("record@$v") ;;
	*) die "RECORD_VARIANTS: '$v' is none of zlib, alone" ;;
	esac
done

# SIGINT (a tracer's normal stop: udpdrop prints its summary), then wait;
# SIGKILL if it is still there after 10 s.
stop_tool() {
	local pid=$1
	kill -INT "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "bench: pid $pid ignored SIGINT for 10 s: killed" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	forget "$pid"
}

# ---- one measurement ---------------------------------------------------------

# cfg round senders rate ns_ev run_cnt tool_cpu_ms foreign dropped sk_drops ud_total events shed
results=$work/results.tsv
: >"$results"
records=$work/records.tsv # round events shed file_bytes duration_s drops cpu_ms (during the storm)
: >"$records"

# the udpdrop binary of a configuration (top@base: BASELINE's top)
bin_of() { [[ $1 == *@base ]] && echo "$BASELINE" || echo "$UDPDROP"; }

run_one() {
	local cfg=$1 round=$2 k=$3 secs=${4:-$SECS}
	local out=$work/$cfg.$round.$k.out err=$work/$cfg.$round.$k.err
	local pid= ids= s0 s1 c0=0 c1=0 spid storm_line foreign ud_total=- ev=- sh=-
	local bin

	bin=$(bin_of "$cfg")
	case $cfg in
	none) ;;
	floor)
		"$FLOOR" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$out" '^ready' ||
			die "bench-floor did not attach: $(tail -n 3 "$err")"
		;;
	top | top@base)
		"$bin" top -b -i 1 --port "$PORT" >"$out" 2>"$err" </dev/null &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$err" 'tracing UDP drops' ||
			die "$cfg did not attach: $(tail -n 3 "$err")"
		;;
	record | record@*)
		local variant=() envs=()
		[[ $cfg == record@zlib ]] && variant=(--compression zlib)
		[[ $cfg == record@alone ]] && envs=(UDPDROP_PACK_THREADS=0)
		# env execs the tool: $! is its pid
		env "${envs[@]}" "$bin" record -f -o "$work/record.data" -i 1 --port "$PORT" \
			"${variant[@]}" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$err" 'recording UDP drops' ||
			die "$cfg did not start: $(tail -n 3 "$err")"
		;;
	bpftrace)
		"${bpftrace_cmd[@]}" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		# its "Attaching" line may sit in a stdio buffer: watch the kernel
		wait_for_progs "$pid" >/dev/null ||
			die "bpftrace did not attach: $(grep -v RLIMIT_MEMLOCK "$err" | tail -n 3)"
		;;
	esac
	if [[ -n $pid ]]; then
		ids=$(wait_for_progs "$pid") ||
			die "$cfg: no program of pid $pid on kfree_skb after ${READY_TIMEOUT}s"
		# udpdrop: only its kfree program counts
		[[ $cfg == top* || $cfg == record* ]] && ids=$(ids_named "$ids" udpdrop_kfree)
		[[ -n $ids ]] || die "$cfg: its kfree_skb program not found"
	fi
	foreign=$(foreign_progs "$ids" | paste -sd, -)

	[[ -n $ids ]] && s0=$(prog_stats "$ids")
	[[ -n $pid ]] && c0=$(cpu_ns "$pid")
	# in the background, so a signal to the bench stops it at once too
	"$STORM" -p "$PORT" -t "$secs" -k "$k" >"$work/storm.out" &
	spid=$!
	started+=("$spid")
	wait "$spid" || die "storm failed (port $PORT)"
	forget "$spid"
	storm_line=$(<"$work/storm.out")
	[[ -n $ids ]] && s1=$(prog_stats "$ids")
	[[ -n $pid ]] && c1=$(cpu_ns "$pid")

	[[ -n $foreign ]] || foreign=$(foreign_progs "$ids" | paste -sd, -)
	[[ -n $pid ]] && stop_tool "$pid"

	local rate dropped skd ns_ev=- cnt=- cpu_ms
	rate=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' <<<"$storm_line")
	dropped=$(sed -n 's/.* dropped=\([0-9]*\).*/\1/p' <<<"$storm_line")
	skd=$(sed -n 's/.* sk_drops=\([0-9]*\).*/\1/p' <<<"$storm_line")
	if [[ -n $ids ]]; then
		read -r rt0 n0 <<<"$s0"
		read -r rt1 n1 <<<"$s1"
		cnt=$((n1 - n0))
		((cnt > 0)) && ns_ev=$(awk -v t=$((rt1 - rt0)) -v n="$cnt" 'BEGIN { printf "%.1f", t / n }')
	fi
	cpu_ms=$(awk -v t=$((c1 - c0)) 'BEGIN { printf "%.1f", t / 1e6 }')
	if [[ $cfg == top* ]]; then
		# the final summary's "total N datagrams dropped"
		ud_total=$(sed -n '/=== summary/,$ s/^total \([0-9,]*\) datagrams dropped.*/\1/p' "$out" |
			tail -n 1 | tr -d ,)
		[[ -n $ud_total ]] || ud_total=missing
	fi
	if [[ $cfg == record* ]]; then
		# "udpdrop record: N drops, E events (S shed) in D s written to ..."
		local line dur
		line=$(grep '^udpdrop record: .* drops, ' "$err" | tail -n 1 | tr -d ,)
		ud_total=$(sed -n 's/^udpdrop record: \([0-9]*\) drops.*/\1/p' <<<"$line")
		ev=$(sed -n 's/.* drops \([0-9]*\) events.*/\1/p' <<<"$line")
		sh=$(sed -n 's/.* (\([0-9]*\) shed).*/\1/p' <<<"$line")
		dur=$(sed -n 's/.* in \([0-9.]*\) s written.*/\1/p' <<<"$line")
		[[ -n $ud_total && -n $ev && -n $sh && -n $dur ]] ||
			die "$cfg: no summary line: $(tail -n 3 "$err")"
		[[ $cfg == record ]] &&
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$ev" "$sh" \
				"$(stat -c %s "$work/record.data")" "$dur" "$ud_total" "$cpu_ms" >>"$records"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$round" "$k" "$rate" \
		"$ns_ev" "$cnt" "$cpu_ms" "${foreign:--}" "$dropped" "$skd" "$ud_total" "$ev" "$sh" >>"$results"
	# the tool's CPU too: a run cut short (a lent machine's time limit)
	# still has it in these lines
	printf '  round %-9s %2s senders %-12s %9s dgram/s %8s ns/event %10s events%s%s%s\n' \
		"$round" "$k" "$cfg" "$rate" "$ns_ev" "$cnt" \
		"$([[ $sh != - ]] && echo "  shed $sh")" \
		"$([[ -n $pid ]] && echo "  cpu $cpu_ms ms")" \
		"$([[ -n $foreign ]] && echo "  (foreign kfree_skb progs: $foreign)")"
}

# ---- start-up: launch to the first counted drop ----------------------------------

startups=$work/startups.tsv # binary first_event_ms attach_ms
: >"$startups"

# With a one-sender storm on $PORT running: launch `udpdrop record` ($1)
# and take exec -> its first event (CLOCK_MONOTONIC, as the events' time).
start_one() {
	local bin=$1 name=$2 err=$work/start.err data=$work/start.data t0 first attach pid
	rm -f "$data"
	# perl stamps the clock and execs udpdrop in the same process
	perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e \
		'open(my $f, ">", shift) or die; printf $f "%d\n", clock_gettime(CLOCK_MONOTONIC) * 1e9; close $f; exec @ARGV or die' \
		"$work/t0" "$bin" record -v -f -o "$data" -i 1 --port "$PORT" 2>"$err" &
	pid=$!
	started+=("$pid")
	wait_for_line "$pid" "$err" 'recording UDP drops' ||
		die "$name did not start: $(grep -v libbpf "$err" | tail -n 3)"
	sleep 0.5
	stop_tool "$pid"
	t0=$(<"$work/t0")
	# the first EVENT only (grep stops reading: no pipefail here)
	first=$(set +o pipefail; "$TRACECAT" "$data" | grep -m 1 '"type":"EVENT"' | jq -r .time_ns)
	[[ -n $first ]] || die "$name: no event in its trace (the storm is on port $PORT)"
	attach=$(sed -n 's/.*attached after \([0-9.]*\) ms.*/\1/p' "$err" | head -n 1)
	printf '%s\t%s\t%s\n' "$name" "$(awk -v a="$first" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1e6 }')" \
		"${attach:--}" >>"$startups"
	printf '  start %-12s first counted drop %8s ms after exec (attached after %s ms)\n' "$name" \
		"$(tail -n 1 "$startups" | cut -f2)" "${attach:--}"
}

# ---- the run --------------------------------------------------------------------

t_start=$SECONDS
echo "udpdrop bench: $(date -Is)"
echo "machine: $NCPU CPUs, kernel $(uname -r), $(uname -m)"
echo "storm: 127.0.0.1, sendmmsg batches of 64, 16-byte payload, SO_RCVBUF 4096, senders: $SENDERS (one per CPU), ${SECS}s per configuration per round, $ROUNDS rounds"
[[ -n $bpftrace_note ]] && echo "note: $bpftrace_note"
[[ -n $BASELINE ]] && echo "baseline: $BASELINE (top@base, record@base)"

stats_prev=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
[[ $PORT == 0 ]] && PORT=$(pick_port)
echo "port: $PORT"
echo

n=${#configs[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for k in $SENDERS; do
		for ((i = 0; i < n; i++)); do
			run_one "${configs[$(((i + r - 1) % n))]}" "$r" "$k"
		done
	done
done

# one sustained storm, recorded: does the writer keep up, and what does
# an event cost on disk
echo "sustained: a ${RECORD_SECS}s storm of $NCPU senders recorded"
run_one record sustained "$NCPU" "$RECORD_SECS"

echo "start-up: $STARTS launches of udpdrop record during a one-sender storm"
"$STORM" -p "$PORT" -t 3600 -k 1 >/dev/null &
storm_bg=$!
started+=("$storm_bg")
sleep 0.5
for ((i = 1; i <= STARTS; i++)); do
	start_one "$UDPDROP" record
	[[ -n $BASELINE ]] && start_one "$BASELINE" record@base
done
kill -TERM "$storm_bg" 2>/dev/null || true
wait "$storm_bg" 2>/dev/null || true
forget "$storm_bg"

# ---- the table ------------------------------------------------------------------

# median of the numbers on stdin ("-" ignored); "-" when there are none
median() {
	{ grep -E '^[0-9.]+$' || true; } | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "-"; exit }
		      if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# column $3 of configuration $1 with $2 senders, the sustained run left out
col() { awk -F'\t' -v c="$1" -v k="$2" -v f="$3" '$1 == c && $3 == k && $2 != "sustained" { print $f }' "$results"; }

echo
echo "medians over $ROUNDS rounds ($NCPU CPUs, kernel $(uname -r)):"
printf '%7s  %-12s %12s %10s %9s %9s %11s %11s\n' senders configuration "datagrams/s" "vs floor" \
	"ns/drop" "vs floor" "shed %" "tool CPU ms"
for k in $SENDERS; do
	f_rate=$(col floor "$k" 4 | median)
	f_ns=$(col floor "$k" 5 | median)
	for c in "${configs[@]}"; do
		rate=$(col "$c" "$k" 4 | median)
		ns=$(col "$c" "$k" 5 | median)
		cpu=$(col "$c" "$k" 7 | median)
		shed=-
		if [[ $c == record* ]]; then
			shed=$(awk -F'\t' -v c="$c" -v k="$k" '$1 == c && $3 == k && $2 != "sustained" {
				printf "%.2f\n", ($12 + $13 > 0) ? 100 * $13 / ($12 + $13) : 0 }' "$results" | median)
		fi
		printf '%7s  %-12s %12.0f %10s %9s %9s %11s %11s\n' "$k" "$c" "$rate" \
			"$(ratio "$rate" "$f_rate")" "$ns" "$(ratio "$ns" "$f_ns")" "$shed" \
			"$([[ $c == none ]] && echo - || echo "$cpu")"
	done
done
echo "ns/drop = delta run_time_ns / delta run_cnt of the kfree_skb program over the storm (kernel.bpf_stats_enabled; every kfree_skb in the system counts)"
echo "datagrams/s vs floor = the storm's send rate with the tool attached / with the empty program attached, same senders"
echo "shed % = events shed / (events written + shed), record's summary line; tool CPU = the tracer process's own CPU time during the storm"
if [[ " ${configs[*]} " != *" bpftrace "* ]]; then
	echo "bpftrace: - ($bpftrace_note)"
fi

echo
echo "start-up, udpdrop record launched during a one-sender storm (medians of $STARTS):"
printf '%-12s %24s %22s\n' binary "exec to first drop, ms" "exec to attach, ms"
for b in record record@base; do
	awk -F'\t' -v b="$b" '$1 == b' "$startups" | grep -q . || continue
	printf '%-12s %24s %22s\n' "$b" "$(awk -F'\t' -v b="$b" '$1 == b { print $2 }' "$startups" | median)" \
		"$(awk -F'\t' -v b="$b" '$1 == b { print $3 }' "$startups" | median)"
done

echo
echo "udpdrop record, events written (every kfree_skb of the storm's socket is one event):"
printf '%10s %8s %12s %12s %10s %12s %10s %12s %14s\n' round "secs" "drops" "events" "events/s" "shed" "shed %" "bytes/event" "CPU ns/event"
awk -F'\t' '{
	printf "%10s %8s %12s %12s %10.0f %12s %10.2f %12.1f %14.1f\n", $1, $5, $6, $2,
	       ($5 > 0 ? $2 / $5 : 0), $3, ($2 + $3 > 0 ? 100 * $3 / ($2 + $3) : 0),
	       ($2 > 0 ? $4 / $2 : 0), ($2 > 0 ? $7 * 1e6 / $2 : 0)
}' "$records"
echo "(events + shed = drops: every drop is either written or counted as shed; the counts stay exact;"
echo " CPU ns/event = the record process's CPU during the storm, all its threads, per event written;"
echo " the drain after the storm is left out: a little low where the rings are full at the end)"
sus_rate=$(awk -F'\t' '$1 == "record" && $2 == "sustained" { print $4 }' "$results")
echo "sustained storm rate while recorded ($NCPU senders): ${sus_rate:--} datagrams/s, $(ratio "${sus_rate:--}" "$(col none "$NCPU" 4 | median)") of the median without any tracer"

echo
echo "correctness (top and record rounds): storm drops vs udpdrop's summary total"
printf '%12s %10s %8s %12s %12s %12s %8s\n' tool round senders "storm drops" "sk_drops" "udpdrop" "diff"
awk -F'\t' '$1 ~ /^(top|record)/ {
	d = ($11 ~ /^[0-9]+$/) ? $11 - $9 : "?"
	printf "%12s %10s %8s %12s %12s %12s %8s%s\n", $1, $2, $3, $9, $10, $11, d,
	       (d == 0) ? "  exact" : (d == "?") ? "  NO SUMMARY" : sprintf("  %+.4f%%", 100 * d / ($9 ? $9 : 1))
}' "$results"

foreign_rounds=$(awk -F'\t' '$8 != "-"' "$results" | wc -l)
((foreign_rounds)) &&
	echo "warning: $foreign_rounds measurements ran while other kfree_skb programs were attached (another user's tracer): their datagrams/s are lower for reasons outside this bench"
echo
echo "bench: done in $((SECONDS - t_start)) s"
