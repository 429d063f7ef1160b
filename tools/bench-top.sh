#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop top's own CPU use at a 1 s refresh, with 10,000 UDP sockets open
# and 1,000 of them dropping. The target: under 2% of one core (process CPU
# time over the whole run, start-up included, divided by its wall time).
#
# Two throwaway network namespaces joined by veth (traffic never leaves
# them): in the receiver, tools/bench/sockets.c holds SOCKETS sockets bound to
# consecutive ports with a 4 KiB SO_RCVBUF and never reads; in the sender one
# process cycles the first DROPPING ports, one datagram each per round, at
# RATE datagrams/s in total, so each of them drops steadily.
#
# Configurations, each run once per round, rounds interleaved (the order
# rotates), medians over rounds in the table:
#   batch       udpdrop top --batch -i 1 -n COUNT -N NS   (stdout to /dev/null)
#   batch -a    the same, listing all sockets
#   screen      udpdrop top -i 1 -n COUNT -N NS, the full-screen view in a
#               detached tmux (private socket, 120x40, LANG=C.UTF-8)
#   screen -a   the same, listing all sockets
# CPU time is getrusage(RUSAGE_CHILDREN) of `bench-sockets cpu`, which runs
# udpdrop as its child; "steady" leaves out the first WARM seconds (BPF load,
# BTF parse, the first socket dump).
#
#   tools/bench-top.sh      (or: make bench)
#   ROUNDS=2 COUNT=60 SOCKETS=10000 DROPPING=1000 RATE=2000 tools/bench-top.sh
set -euo pipefail

cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-2}
COUNT=${COUNT:-60}
SOCKETS=${SOCKETS:-10000}
DROPPING=${DROPPING:-1000}
RATE=${RATE:-2000}
WARM=${WARM:-3}
TARGET=${TARGET:-2}
BASE_PORT=20000
UDPDROP=$PWD/udpdrop
SOCKBIN=$PWD/.output/bench-sockets

die() {
	echo "bench-top: $*" >&2
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "needs root (BPF, network namespaces)"
for c in ip jq tmux; do
	command -v "$c" >/dev/null || die "$c not found (make deps)"
done
[[ -x $UDPDROP ]] || die "$UDPDROP missing: run make udpdrop (or make bench)"
[[ -x $SOCKBIN ]] || die "$SOCKBIN missing: run make .output/bench-sockets (or make bench)"
for v in ROUNDS COUNT SOCKETS DROPPING RATE; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
((DROPPING <= SOCKETS)) || die "DROPPING ($DROPPING) must not exceed SOCKETS ($SOCKETS)"
((BASE_PORT + SOCKETS <= 65536)) || die "SOCKETS too large for ports from $BASE_PORT"

# ---- namespaces, processes, tmux: all removed on any exit -------------------

A=udpdrop-bt-a-$$
B=udpdrop-bt-b-$$
TMUX_SOCK=udpdrop-bench-top-$$
work=$(mktemp -d /tmp/udpdrop-bench-top.XXXXXX)
started=()
cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM
	((rc == 130 || rc == 143)) && echo "bench-top: interrupted, cleaning up" >&2
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	for pid in "${started[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${started[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$A"
ip netns add "$B"
ip link add veth0 netns "$A" type veth peer name veth0 netns "$B"
ip -n "$A" addr add 10.197.0.1/24 dev veth0
ip -n "$B" addr add 10.197.0.2/24 dev veth0
for ns in "$A" "$B"; do
	ip -n "$ns" link set veth0 up
	ip -n "$ns" link set lo up
done

wait_for_line() { # pid file pattern timeout
	local deadline=$((SECONDS + $4))
	while ! grep -q -- "$3" "$2" 2>/dev/null; do
		kill -0 "$1" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

ip netns exec "$B" "$SOCKBIN" hold 10.197.0.2 "$BASE_PORT" "$SOCKETS" --rcvbuf 4096 \
	>"$work/hold.out" 2>"$work/hold.err" &
started+=($!)
hold_pid=$!
wait_for_line "$hold_pid" "$work/hold.out" '^ready' 60 ||
	die "the $SOCKETS sockets were not bound: $(tail -n 3 "$work/hold.err")"
open=$(ip netns exec "$B" ss -Huan | wc -l)

ip netns exec "$A" "$SOCKBIN" send 10.197.0.2 "$BASE_PORT" "$DROPPING" --rate "$RATE" \
	>"$work/send.out" 2>"$work/send.err" &
started+=($!)
send_pid=$!
wait_for_line "$send_pid" "$work/send.out" '^sending' 10 ||
	die "the sender did not start: $(tail -n 3 "$work/send.err")"

t_start=$SECONDS
echo "udpdrop bench-top: $(date -Is)"
echo "machine: $(nproc) CPUs, kernel $(uname -r), $(uname -m)"
echo "load: $open UDP sockets open in netns $B (10.197.0.2:$BASE_PORT-$((BASE_PORT + SOCKETS - 1)), SO_RCVBUF 4096, never read);"
echo "      $DROPPING of them sent one datagram per round from netns $A at $RATE datagrams/s in total"
echo "runs: -i 1 -n $COUNT, $ROUNDS rounds interleaved, medians; target < $TARGET% of one core"

# ---- does udpdrop see ~DROPPING dropping sockets? -----------------------------

sleep 2 # the sender's fill rounds: every buffer full
json_check() { # extra args; prints "listed dropping"
	"$UDPDROP" top --json -i 1 -n 2 -N "$B" "$@" 2>"$work/json.err" | tail -n 1 |
		jq -r '"\(.sockets | length) \([.sockets[] | select(.drops > 0)] | length)"'
}
read -r listed dropping < <(json_check) || die "udpdrop --json failed: $(tail -n 3 "$work/json.err")"
read -r listed_all dropping_all < <(json_check -a) || die "udpdrop --json -a failed: $(tail -n 3 "$work/json.err")"
echo "udpdrop --json (2 s): $listed sockets listed, $dropping with drops; with -a: $listed_all listed, $dropping_all with drops"
((dropping >= DROPPING * 95 / 100)) ||
	echo "warning: udpdrop counted drops on $dropping sockets, expected about $DROPPING"
echo

# ---- the runs -------------------------------------------------------------------

configs=(batch batch-a screen screen-a)
results=$work/results.tsv # cfg round wall cpu warm_wall warm_cpu status
: >"$results"

run_one() {
	local cfg=$1 round=$2 res=$work/$1.$2.cpu err=$work/$1.$2.err args=()
	[[ $cfg == *-a ]] && args=(-a)
	case $cfg in
	batch*)
		"$SOCKBIN" cpu -o "$res" --warm "$WARM" -- \
			"$UDPDROP" top --batch -i 1 -n "$COUNT" -N "$B" "${args[@]}" \
			>/dev/null 2>"$err" || die "$cfg: bench-sockets cpu failed"
		;;
	screen*)
		local cmd
		cmd=$(printf '%q ' env LANG=C.UTF-8 "$SOCKBIN" cpu -o "$res" --warm "$WARM" -- \
			"$UDPDROP" top -i 1 -n "$COUNT" -N "$B" "${args[@]}")
		tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s bench -x 120 -y 40 \
			"$cmd 2>$(printf '%q' "$err")"
		local deadline=$((SECONDS + COUNT + 60)) captured=
		while [[ ! -s $res ]]; do
			((SECONDS < deadline)) || die "$cfg: the full-screen run did not end in $((COUNT + 60)) s"
			if [[ -z $captured && $round == 1 ]] && ((SECONDS > deadline - 60 - COUNT / 2)); then
				tmux -L "$TMUX_SOCK" capture-pane -p -t bench >"$work/$cfg.$round.screen" 2>/dev/null || true
				captured=1
			fi
			sleep 0.2
		done
		;;
	esac
	local wall cpu ww wc st
	read -r _ wall _ cpu _ _ _ _ _ ww _ wc _ st <"$res"
	((st == 0)) || die "$cfg: udpdrop exited with status $st: $(tail -n 3 "$err")"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$round" "$wall" "$cpu" "$ww" "$wc" >>"$results"
	printf '  round %d %-9s wall %7.2f s  CPU %7.3f s  %6.2f%%  steady %6.2f%%\n' "$round" "$cfg" \
		"$wall" "$cpu" "$(awk -v c="$cpu" -v w="$wall" 'BEGIN { print 100 * c / w }')" \
		"$(awk -v c="$wc" -v w="$ww" 'BEGIN { print (w > 0) ? 100 * c / w : -1 }')"
}

n=${#configs[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < n; i++)); do
		run_one "${configs[$(((i + r - 1) % n))]}" "$r"
	done
done
kill -0 "$send_pid" 2>/dev/null || die "the sender died during the run"
kill -0 "$hold_pid" 2>/dev/null || die "the socket holder died during the run"

# ---- the table --------------------------------------------------------------------

median() {
	sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c { print $k }' "$results"; }
pct() { awk -F'\t' -v c="$1" -v a="$2" -v b="$3" '$1 == c && $b > 0 { print 100 * $a / $b }' "$results"; }

echo
echo "medians over $ROUNDS rounds (CPU = udpdrop's user+system time; % of one core = CPU / wall):"
printf '%-10s %8s %9s %10s %8s %8s %9s %9s  %s\n' configuration sockets dropping refreshes \
	"wall s" "CPU s" "% core" "steady %" "verdict (< $TARGET%)"
for c in "${configs[@]}"; do
	wall=$(col "$c" 3 | median)
	cpu=$(col "$c" 4 | median)
	p=$(pct "$c" 4 3 | median)
	sp=$(pct "$c" 6 5 | median)
	if [[ $c == *-a ]]; then lst=$listed_all; else lst=$listed; fi
	verdict=$(awk -v p="$p" -v t="$TARGET" 'BEGIN { print (p < t) ? "ok" : "OVER" }')
	printf '%-10s %8s %9s %10s %8.2f %8.3f %8.2f%% %8.2f%%  %s\n' "${c/-a/ -a}" "$open" "$dropping" \
		"$COUNT" "$wall" "$cpu" "$p" "$sp" "$verdict"
done
echo "sockets = UDP sockets open in the netns; dropping = sockets with drops in udpdrop's --json"
echo "listed per refresh: $listed without -a, $listed_all with -a"
echo "steady = from ${WARM} s after start to exit (no start-up); the verdict is on the whole run"

if [[ -s $work/screen.1.screen ]]; then
	echo
	echo "full-screen view (round 1, mid-run, first 6 lines):"
	head -n 6 "$work/screen.1.screen" | cut -c1-120
fi

kill -TERM "$send_pid" 2>/dev/null || true
wait "$send_pid" 2>/dev/null || true
echo
echo "sender: $(cat "$work/send.out" | tail -n 1)"
echo "bench-top: done in $((SECONDS - t_start)) s"
