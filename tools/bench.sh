#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop benchmark: the per-drop cost of udpdrop's BPF program, side by
# side with an empty program on the same tracepoint (the floor), with
# bpftrace counting drop reasons, and with nothing attached.
#
# The load is a loopback drop storm (tools/bench/storm.c): a receiver on
# 127.0.0.1 with a tiny SO_RCVBUF that never reads, flooded with sendmmsg.
# Every configuration runs once per round, rounds interleaved (the order
# rotates), and the table shows medians over rounds: on a shared, noisy
# machine only ratios measured side by side mean anything.
#
#   tools/bench.sh          (or: make bench)
#   ROUNDS=5 SECS=3 PORT=0 tools/bench.sh
#
# `record` is udpdrop record writing every drop's event to a file: its
# rounds give the storm's rate with it attached; then one sustained storm
# of RECORD_SECS (30) is recorded for the writer's events/s, what it shed
# and the file's bytes per event.
#
# Needs root (BPF, kernel.bpf_stats_enabled), bpftool and jq; bpftrace is
# optional. Traffic stays on 127.0.0.1.
set -euo pipefail

cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
RECORD_SECS=${RECORD_SECS:-30}
PORT=${PORT:-0}
UDPDROP=./udpdrop
FLOOR=.output/bench-floor
STORM=.output/bench-storm
STORM_SRC=tools/bench/storm.c
BPFTRACE=${BPFTRACE:-$(command -v bpftrace || true)}
BT_PROG='tracepoint:skb:kfree_skb { @[args->reason] = count(); }'
READY_TIMEOUT=20 # seconds for a tool to attach

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
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ $SECS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "SECS must be a number of seconds"
if [[ ! -x $STORM || $STORM_SRC -nt $STORM ]]; then
	mkdir -p "$(dirname "$STORM")"
	cc -O2 -o "$STORM" "$STORM_SRC" || die "cannot build $STORM"
fi

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
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%d\n", t }'
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
	bpftrace_note="bpftrace skipped: not installed (make deps)"
fi

configs=(none floor udpdrop record)
((${#bpftrace_cmd[@]})) && configs+=(bpftrace)

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

results=$work/results.tsv # cfg round rate ns_ev run_cnt tool_cpu_ms foreign dropped sk_drops ud_total
: >"$results"
records=$work/records.tsv # round events shed file_bytes duration_s drops
: >"$records"

run_one() {
	local cfg=$1 round=$2 out=$work/$1.$2.out err=$work/$1.$2.err
	local pid= ids= s0 s1 c0=0 c1=0 spid storm_line foreign ud_total=-

	case $cfg in
	none) ;;
	floor)
		"$FLOOR" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$out" '^ready' ||
			die "bench-floor did not attach: $(tail -n 3 "$err")"
		;;
	udpdrop)
		"$UDPDROP" top -b -i 1 --port "$PORT" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$err" 'tracing UDP drops' ||
			die "udpdrop did not attach: $(tail -n 3 "$err")"
		;;
	record)
		"$UDPDROP" record -f -o "$work/record.data" -i 1 --port "$PORT" >"$out" 2>"$err" &
		pid=$!
		started+=("$pid")
		wait_for_line "$pid" "$err" 'recording UDP drops' ||
			die "udpdrop record did not start: $(tail -n 3 "$err")"
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
		[[ $cfg == udpdrop || $cfg == record ]] && ids=$(ids_named "$ids" udpdrop_kfree)
		[[ -n $ids ]] || die "$cfg: its kfree_skb program not found"
	fi
	foreign=$(foreign_progs "$ids" | paste -sd, -)

	[[ -n $ids ]] && s0=$(prog_stats "$ids")
	[[ -n $pid ]] && c0=$(cpu_ns "$pid")
	# in the background, so a signal to the bench stops it at once too
	"$STORM" -p "$PORT" -t "${3:-$SECS}" >"$work/storm.out" &
	spid=$!
	started+=("$spid")
	wait "$spid" || die "storm failed (port $PORT)"
	forget "$spid"
	storm_line=$(<"$work/storm.out")
	[[ -n $ids ]] && s1=$(prog_stats "$ids")
	[[ -n $pid ]] && c1=$(cpu_ns "$pid")

	[[ -n $foreign ]] || foreign=$(foreign_progs "$ids" | paste -sd, -)
	[[ -n $pid ]] && stop_tool "$pid"
	echo "$storm_line" >"$work/$cfg.$round.storm"

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
	if [[ $cfg == udpdrop ]]; then
		# the final summary's "total N datagrams dropped"
		ud_total=$(sed -n '/=== summary/,$ s/^total \([0-9,]*\) datagrams dropped.*/\1/p' "$out" |
			tail -n 1 | tr -d ,)
		[[ -n $ud_total ]] || ud_total=missing
	fi
	if [[ $cfg == record ]]; then
		# "udpdrop record: N drops, E events (S shed) in D s written to ..."
		local line ev sh dur
		line=$(grep '^udpdrop record: .* drops, ' "$err" | tail -n 1 | tr -d ,)
		ud_total=$(sed -n 's/^udpdrop record: \([0-9]*\) drops.*/\1/p' <<<"$line")
		ev=$(sed -n 's/.* drops \([0-9]*\) events.*/\1/p' <<<"$line")
		sh=$(sed -n 's/.* (\([0-9]*\) shed).*/\1/p' <<<"$line")
		dur=$(sed -n 's/.* in \([0-9.]*\) s written.*/\1/p' <<<"$line")
		[[ -n $ud_total && -n $ev && -n $sh && -n $dur ]] ||
			die "udpdrop record: no summary line: $(tail -n 3 "$err")"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$ev" "$sh" \
			"$(stat -c %s "$work/record.data")" "$dur" "$ud_total" >>"$records"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$round" "$rate" \
		"$ns_ev" "$cnt" "$cpu_ms" "${foreign:--}" "$dropped" "$skd" "$ud_total" >>"$results"
	printf '  round %-9s %-9s %9s dgram/s  %8s ns/event  %10s events  tool CPU %5s ms%s\n' \
		"$round" "$cfg" "$rate" "$ns_ev" "$cnt" "$([[ -n $pid ]] && echo "$cpu_ms" || echo -)" \
		"$([[ -n $foreign ]] && echo "  (foreign kfree_skb progs: $foreign)")"
}

# ---- the run --------------------------------------------------------------------

t_start=$SECONDS
echo "udpdrop bench: $(date -Is)"
echo "machine: $(nproc) CPUs, kernel $(uname -r), $(uname -m)"
echo "storm: 127.0.0.1, sendmmsg batches of 64, 16-byte payload, SO_RCVBUF 4096, ${SECS}s per configuration per round, $ROUNDS rounds"
[[ -n $bpftrace_note ]] && echo "note: $bpftrace_note"

stats_prev=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
[[ $PORT == 0 ]] && PORT=$(pick_port)
echo "port: $PORT"
echo

n=${#configs[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < n; i++)); do
		run_one "${configs[$(((i + r - 1) % n))]}" "$r"
	done
done

# one sustained storm, recorded: does the writer keep up, and what does
# an event cost on disk (its rate shows in the table's record row)
echo "sustained: a ${RECORD_SECS}s storm recorded"
run_one record sustained "$RECORD_SECS"

# ---- the table ------------------------------------------------------------------

# median of the numbers on stdin ("-" ignored); "-" when there are none
median() {
	{ grep -E '^[0-9.]+$' || true; } | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "-"; exit }
		      if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c { print $k }' "$results"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

declare -A med_rate med_ns med_cpu
# the sustained run is reported on its own below
col() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c && $2 != "sustained" { print $k }' "$results"; }
for c in "${configs[@]}"; do
	med_rate[$c]=$(col "$c" 3 | median)
	med_ns[$c]=$(col "$c" 4 | median)
	med_cpu[$c]=$(col "$c" 6 | median)
done

echo
echo "medians over $ROUNDS rounds:"
printf '%-10s %14s %9s %11s %9s %12s\n' configuration "datagrams/s" "vs none" "ns/event" "vs floor" "tool CPU ms"
for c in "${configs[@]}"; do
	printf '%-10s %14.0f %9s %11s %9s %12s\n' "$c" "${med_rate[$c]}" \
		"$(ratio "${med_rate[$c]}" "${med_rate[none]}")" "${med_ns[$c]}" \
		"$(ratio "${med_ns[$c]}" "${med_ns[floor]}")" \
		"$([[ $c == none ]] && echo - || echo "${med_cpu[$c]}")"
done
if [[ " ${configs[*]} " == *" bpftrace "* ]]; then
	echo "udpdrop / bpftrace: ns/event $(ratio "${med_ns[udpdrop]}" "${med_ns[bpftrace]}"), datagrams/s $(ratio "${med_rate[udpdrop]}" "${med_rate[bpftrace]}")"
	echo "(bpftrace's ns/event is its BPF program only; a classic tracepoint also fills the perf record outside it, which only datagrams/s shows)"
else
	echo "udpdrop / bpftrace: - ($bpftrace_note)"
fi
echo "ns/event = delta run_time_ns / delta run_cnt over the storm (kernel.bpf_stats_enabled); every kfree_skb in the system counts as an event"
echo "tool CPU = the tracer process's own CPU time (all threads) during the storm; its BPF time runs in the storm's softirq, in ns/event"

echo "udpdrop record / top: datagrams/s $(ratio "${med_rate[record]}" "${med_rate[udpdrop]}"), ns/event $(ratio "${med_ns[record]}" "${med_ns[udpdrop]}")"

echo
echo "udpdrop record, events written (every kfree_skb of the storm's socket is one event):"
printf '%10s %8s %12s %12s %10s %12s %10s %12s\n' round "secs" "drops" "events" "events/s" "shed" "shed %" "bytes/event"
awk -F'\t' '{
	printf "%10s %8s %12s %12s %10.0f %12s %10.2f %12.1f\n", $1, $5, $6, $2,
	       ($5 > 0 ? $2 / $5 : 0), $3, ($2 + $3 > 0 ? 100 * $3 / ($2 + $3) : 0),
	       ($2 > 0 ? $4 / $2 : 0)
}' "$records"
echo "(events + shed = drops: every drop is either written or counted as shed; the counts stay exact)"
sus_rate=$(awk -F'\t' '$1 == "record" && $2 == "sustained" { print $3 }' "$results")
echo "sustained storm rate while recorded: ${sus_rate:--} datagrams/s, $(ratio "${sus_rate:--}" "${med_rate[none]}") of the median without any tracer"

echo
echo "correctness (udpdrop and record rounds): storm drops vs udpdrop's summary total"
printf '%9s %6s %12s %12s %12s %8s\n' tool round "storm drops" "sk_drops" "udpdrop" "diff"
awk -F'\t' '$1 == "udpdrop" || $1 == "record" {
	d = ($10 ~ /^[0-9]+$/) ? $10 - $8 : "?"
	printf "%9s %6s %12s %12s %12s %8s%s\n", $1, $2, $8, $9, $10, d,
	       (d == 0) ? "  exact" : (d == "?") ? "  NO SUMMARY" : sprintf("  %+.4f%%", 100 * d / ($8 ? $8 : 1))
}' "$results"

foreign_rounds=$(awk -F'\t' '$7 != "-"' "$results" | wc -l)
((foreign_rounds)) &&
	echo "warning: $foreign_rounds measurements ran while other kfree_skb programs were attached (another user's tracer): their datagrams/s are lower for reasons outside this bench"
echo
echo "bench: done in $((SECONDS - t_start)) s"
