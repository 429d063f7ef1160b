#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The generator benchmark: `udpdrop gen` side by side with `iperf3 -u` on
# one veth pair between two throwaway namespaces, same payload sizes.
#
#  1. Datagram rate, unpaced (gen --rate max; iperf3 -b 0), 64 B and 1472 B:
#     gen with sendmmsg (--burst 64), gen with UDP GSO, iperf3. The
#     receiver drops the datagrams at XDP (bench-gaps drop), so the senders
#     alone are measured, not the receiving stack they share a CPU with.
#  2. Pacing at 100 Mbit/s and 1 Gbit/s, 1472 B: the achieved rate's error
#     at the sender, and at the receiver's XDP (bench-gaps) the
#     inter-arrival gap p50/p99 and the share of datagrams that arrived
#     less than half a target gap after the previous one ("in a burst").
#
# Each configuration runs once per round, rounds interleaved; the table
# shows medians. Receivers: `udpdrop sink --no-tracer` for gen, the iperf3
# server for iperf3 (both read everything). Traffic stays in the namespaces.
#
#   tools/bench-gen.sh            (or: make bench)
#   ROUNDS=3 SECS=4 tools/bench-gen.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SECS=${SECS:-4}
UDPDROP=./udpdrop
GAPS=.output/bench-gaps

die() {
	echo "bench-gen: $*" >&2
	exit 1
}
[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, XDP)"
command -v iperf3 >/dev/null || die "iperf3 not found (make deps)"
command -v jq >/dev/null || die "jq not found (make deps)"
[[ -x $UDPDROP && -x $GAPS ]] || die "build first: make udpdrop $GAPS (or make bench)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ $SECS =~ ^[1-9][0-9]*$ ]] || die "SECS must be a whole number of seconds"

A=ubg-$$-a B=ubg-$$-b
work=$(mktemp -d /tmp/udpdrop-bench-gen.XXXXXX)
pids=()
cleanup() {
	local p
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$A"
ip netns add "$B"
ip link add vb0 netns "$A" type veth peer name vb0 netns "$B"
ip -n "$A" addr add 10.248.7.1/24 dev vb0
ip -n "$B" addr add 10.248.7.2/24 dev vb0
for ns in "$A" "$B"; do ip -n "$ns" link set vb0 up; ip -n "$ns" link set lo up; done
sleep 1
DST=10.248.7.2

# stopwatch PORT HALF_GAP_NS [drop]: bench-gaps on the receiver's vb0, in the background
stopwatch() {
	ip netns exec "$B" "$GAPS" vb0 "$@" >"$work/gaps.out" 2>&1 &
	SW=$!
	pids+=("$SW")
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$work/gaps.out" && return 0
		sleep 0.05
	done
	die "bench-gaps did not start: $(cat "$work/gaps.out")"
}
stopwatch_read() { # prints the JSON line (called in $(...): no wait there)
	kill -INT "$SW"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^{' "$work/gaps.out" && break
		sleep 0.05
	done
	grep '^{' "$work/gaps.out" || die "bench-gaps printed no result: $(cat "$work/gaps.out")"
}

# gen_drop PORT ARGS...: gen into a receiver that drops at XDP; gen's final JSON
gen_drop() {
	local port=$1
	shift
	stopwatch "$port" 1 drop
	ip netns exec "$A" "$UDPDROP" gen "$DST:$port" --no-tracer --no-control --duration "$SECS" --json "$@" \
		>"$work/gen.out" 2>"$work/gen.err" || die "gen failed: $(cat "$work/gen.err")"
	stopwatch_read >/dev/null
	tail -n 1 "$work/gen.out"
}

# gen_run PORT ARGS...: a sink, then gen; prints gen's final JSON object
gen_run() {
	local port=$1
	shift
	ip netns exec "$B" "$UDPDROP" sink "$DST:$port" --no-tracer --one-off --json \
		>"$work/sink.out" 2>&1 &
	local sink=$!
	pids+=("$sink")
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' "$work/sink.out" && break
		sleep 0.05
	done
	ip netns exec "$A" "$UDPDROP" gen "$DST:$port" --no-tracer --duration "$SECS" --json "$@" \
		>"$work/gen.out" 2>"$work/gen.err" || die "gen failed: $(cat "$work/gen.err")"
	wait "$sink" || true
	tail -n 1 "$work/gen.out"
}

# iperf_run ARGS...: an iperf3 server for one test, then the client; its JSON
iperf_run() {
	ip netns exec "$B" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	local srv=$!
	pids+=("$srv")
	sleep 0.3
	ip netns exec "$A" iperf3 -c "$DST" -p 5201 -u -t "$SECS" --json "$@" >"$work/iperf.json" ||
		die "iperf3 failed: $(head -c 300 "$work/iperf.json")"
	wait "$srv" || true
	cat "$work/iperf.json"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A R # results: name -> newline-separated samples

add() { R[$1]+="$2"$'\n'; }

echo "bench-gen: $ROUNDS rounds of ${SECS} s per configuration, veth between two namespaces"
for ((round = 1; round <= ROUNDS; round++)); do
	echo "bench-gen: round $round/$ROUNDS"
	# 1. datagram rate
	for size in 64 1472; do
		j=$(gen_drop 5301 --rate max --size "$size" --burst 64)
		add "rate gen-sendmmsg $size" "$(jq .datagrams_per_second <<<"$j")"
		j=$(gen_drop 5302 --rate max --size "$size" --gso)
		add "rate gen-gso $size" "$(jq .datagrams_per_second <<<"$j")"
		stopwatch 5201 1 drop
		j=$(iperf_run -b 0 -l "$size")
		stopwatch_read >/dev/null
		add "rate iperf3 $size" "$(jq '.end.sum.packets / .end.sum.seconds' <<<"$j")"
	done
	# 2. pacing
	for rate in 100 1000; do
		half=$(jq -n "1472 * 8 / ($rate * 1e6) * 1e9 / 2 | floor")
		stopwatch 5303 "$half"
		j=$(gen_run 5303 --rate "${rate}M" --size 1472)
		g=$(stopwatch_read)
		add "pace gen $rate err" "$(jq "(.bits_per_second - $rate * 1e6) / ($rate * 1e6) * 100 | fabs" <<<"$j")"
		add "pace gen $rate p50" "$(jq .gap_p50_ns <<<"$g")"
		add "pace gen $rate p99" "$(jq .gap_p99_ns <<<"$g")"
		add "pace gen $rate burst" "$(jq '.burst_share * 100' <<<"$g")"
		stopwatch 5201 "$half"
		j=$(iperf_run -b "${rate}M" -l 1472)
		g=$(stopwatch_read)
		add "pace iperf3 $rate err" "$(jq "(.end.sum.bits_per_second - $rate * 1e6) / ($rate * 1e6) * 100 | fabs" <<<"$j")"
		add "pace iperf3 $rate p50" "$(jq .gap_p50_ns <<<"$g")"
		add "pace iperf3 $rate p99" "$(jq .gap_p99_ns <<<"$g")"
		add "pace iperf3 $rate burst" "$(jq '.burst_share * 100' <<<"$g")"
	done
done

m() { printf '%s' "${R[$1]}" | median; }

echo
echo "datagram rate, unpaced (datagrams/s at the sender, medians of $ROUNDS)"
printf '  %-6s %14s %14s %14s %12s %12s\n' size "gen sendmmsg" "gen GSO" "iperf3 -b 0" "sendmmsg/ip3" "GSO/iperf3"
for size in 64 1472; do
	s=$(m "rate gen-sendmmsg $size") g=$(m "rate gen-gso $size") i=$(m "rate iperf3 $size")
	printf '  %-6s %14.0f %14.0f %14.0f %11.2fx %11.2fx\n' "${size} B" "$s" "$g" "$i" \
		"$(jq -n "$s / $i")" "$(jq -n "$g / $i")"
done
echo
echo "pacing, 1472 B (rate error at the sender; gaps and bursts at the receiver's XDP)"
printf '  %-10s %-7s %10s %12s %12s %10s\n' target tool "rate err" "gap p50" "gap p99" "in bursts"
for rate in 100 1000; do
	for tool in gen iperf3; do
		printf '  %-10s %-7s %9.3f%% %9.1f us %9.1f us %9.2f%%\n' "${rate} Mbit/s" "$tool" \
			"$(m "pace $tool $rate err")" "$(jq -n "$(m "pace $tool $rate p50") / 1000")" \
			"$(jq -n "$(m "pace $tool $rate p99") / 1000")" "$(m "pace $tool $rate burst")"
	done
done
echo "  (target gap: 117.8 us at 100 Mbit/s, 11.8 us at 1 Gbit/s; a burst: under half of it)"
