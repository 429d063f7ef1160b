#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A first look: two throwaway namespaces joined by veth, a receiver with a
# small buffer that never reads, a sender, a port nobody
# listens on, and `udpdrop top --batch` watching. Removes everything on
# exit, Ctrl-C and errors included.
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
# the app: bound to 10.199.0.2:5001 with a 4 KiB SO_RCVBUF, never reads
ip netns exec "$B" "$U" recv 10.199.0.2:5001 --rcvbuf 4096 >/dev/null &
pids+=($!)
sleep 0.5
echo "demo: a receiver that never reads (SO_RCVBUF 4096) on 10.199.0.2:5001 in netns $B;"
echo "demo: a sender at ~1000 datagrams/s, plus 10/s to port 5999 where nobody listens."
(
	exec 2>/dev/null # the loop may outlive a namespace being torn down
	for _ in $(seq 60); do
		ip netns exec "$A" "$U" send 10.199.0.2:5001 -c 100 -s 1000 --gap-us 1000 >/dev/null
		ip netns exec "$A" "$U" send 10.199.0.2:5999 -c 1 >/dev/null
	done
) &
pids+=($!)
./udpdrop top --batch --interval 1 --count 5 --netns "$B"
