#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A first look: two throwaway namespaces joined by veth, a receiver with a
# small buffer that never reads, a slow reader hit by bursts, a port
# nobody listens on, and `udpdrop top` watching: the full-screen view on a
# terminal (q to quit), five batch intervals otherwise. Removes everything
# on exit, Ctrl-C and errors included.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "demo: needs root (sudo make demo)" >&2; exit 3; }

A=udpdrop-demo-a B=udpdrop-demo-b
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$A"
ip netns add "$B"
ip link add veth0 netns "$A" type veth peer name veth0 netns "$B"
ip -n "$A" addr add 10.199.0.1/24 dev veth0
ip -n "$B" addr add 10.199.0.2/24 dev veth0
for ns in "$A" "$B"; do ip -n "$ns" link set veth0 up; ip -n "$ns" link set lo up; done

U=.output/tests/udptest
# the apps: 10.199.0.2:5001 with a 4 KiB SO_RCVBUF never reads; :5002 reads
# one datagram every 300 us (3,300/s), with a 32 KiB buffer, in bursts
ip netns exec "$B" "$U" recv 10.199.0.2:5001 --rcvbuf 4096 >/dev/null &
pids+=($!)
ip netns exec "$B" "$U" recv 10.199.0.2:5002 --rcvbuf 32768 --read-gap-us 300 >/dev/null &
pids+=($!)
sleep 0.5
echo "demo: in netns $B, 10.199.0.2:5001 never reads (SO_RCVBUF 4096), 10.199.0.2:5002"
echo "demo: reads slowly (SO_RCVBUF 32768); a sender sends ~1000 datagrams/s to each, to"
echo "demo: 5002 in bursts of 100, plus 10/s to port 5999 where nobody listens."
(
	exec 2>/dev/null # the loop may outlive a namespace being torn down
	for _ in $(seq 600); do
		ip netns exec "$A" "$U" send 10.199.0.2:5001 -c 100 -s 1000 --gap-us 1000 >/dev/null
		ip netns exec "$A" "$U" send 10.199.0.2:5002 -c 100 -s 1000 >/dev/null
		ip netns exec "$A" "$U" send 10.199.0.2:5999 -c 1 >/dev/null
	done
) &
pids+=($!)
if [[ -t 0 && -t 1 && -z ${DEMO_BATCH:-} ]]; then
	echo "demo: the live view follows: Enter on a row for its detail, h for help, q to quit."
	sleep 2
	./udpdrop top --netns "$B" --count 600
else
	# DEMO_ARGS: more for udpdrop (the README's JSON example is DEMO_ARGS=--json)
	./udpdrop top --batch --interval 1 --count 5 --netns "$B" ${DEMO_ARGS:-}
fi
