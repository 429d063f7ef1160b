# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Helpers for the integration tests: two hosts in network namespaces joined
# by a veth pair, udpdrop in the background, ground truth from udptest,
# ss and the kernel's counters. Sourced by run.sh; every test runs in its
# own subshell whose EXIT trap removes everything it made.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
UDPDROP=${UDPDROP:-$ROOT/udpdrop}
UDPTEST=${UDPTEST:-$ROOT/.output/tests/udptest}
TOP_INTERVAL=${TOP_INTERVAL:-0.5}

# Per-test state (set by setup_hosts).
A= B= T= V4A= V4B= V6A= V6B=
# Set by a test whose drops come from reassembly timers (see run.sh).
TIMER_DROPS=
TOP_PID= TOP_OUT= TOP_ERR=
TMUX_SOCK= # a private tmux server for the full-screen tests
declare -a TMUX_SOCKS=() # every one a test started: cleanup kills them
declare -a BG_PIDS=()
declare -a RM_CGROUPS=() # cgroup directories to remove, deepest first
declare -a EXTRA_NETNS=() # more hosts a test made: removed with the rest
# host-wide sysctls a test changed, "name=value" as they were: cleanup
# writes them back (the machine is shared: other tests see the host's)
declare -a RESTORE_SYSCTLS=()

fail() {
	echo "    FAIL: $*" >&2
	# the evidence, once per test: what udpdrop said at the end
	if [[ $FAILED == 0 && -n $T && -s $T/final.json ]]; then
		echo "    final summary was:" >&2
		jq -c 'del(.counters)' "$T/final.json" | cut -c1-2000 | sed 's/^/      /' >&2
	fi
	FAILED=1
}

expect_eq() { # name actual expected
	if [[ "$2" == "$3" ]]; then
		echo "    ok: $1 = $2"
	else
		fail "$1: got '$2', want '$3'"
	fi
}

expect_gt() { # name actual floor
	if [[ "$2" =~ ^[0-9]+$ ]] && (($2 > $3)); then
		echo "    ok: $1 = $2 (> $3)"
	else
		fail "$1: got '$2', want more than $3"
	fi
}

cleanup() {
	local p
	[[ -n "$TOP_PID" ]] && kill -KILL "$TOP_PID" 2>/dev/null
	for p in "${TMUX_SOCKS[@]}"; do
		tmux -L "$p" kill-server 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	# cgroups a test made, deepest first (their processes are gone now)
	for p in "${RM_CGROUPS[@]}"; do
		rmdir "$p" 2>/dev/null || echo "    cannot remove cgroup $p" >&2
	done
	for p in "${RESTORE_SYSCTLS[@]}"; do
		sysctl -qw "$p" >/dev/null || echo "    cannot restore $p" >&2
	done
	for p in "${EXTRA_NETNS[@]}"; do
		ip netns del "$p" 2>/dev/null
	done
	[[ -n "$A" ]] && ip netns del "$A" 2>/dev/null
	[[ -n "$B" ]] && ip netns del "$B" 2>/dev/null
	[[ -n "$T" && -d "$T" ]] && rm -rf "$T"
	return 0
}

# lose_last_fragments NS: NS's nft drops every IPv4 datagram's last
# fragment before reassembly, and its ipfrag_time is 1 s: each fragmented
# datagram times out once (frag_timeout), its other fragments freed then.
lose_last_fragments() {
	TIMER_DROPS=1
	ip netns exec "$1" sysctl -qw net.ipv4.ipfrag_time=1 || return
	ip netns exec "$1" nft -f - <<-EOF
	table ip udt {
		chain pre {
			type filter hook prerouting priority -450;
			ip frag-off & 0x1fff != 0 ip frag-off & 0x2000 == 0 counter drop
		}
	}
	EOF
}

# Two hosts: $A (sender, $V4A/$V6A) and $B (receiver, $V4B/$V6B).
setup_hosts() {
	local id=$((RANDOM % 200 + 20))
	A=udt-$$-a B=udt-$$-b
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	V4A=10.213.$id.1 V4B=10.213.$id.2
	V6A=fd00:213:$id::1 V6B=fd00:213:$id::2
	trap cleanup EXIT
	ip netns add "$A" && ip netns add "$B" &&
	ip link add veth0 netns "$A" type veth peer name veth0 netns "$B" &&
	ip -n "$A" addr add "$V4A/24" dev veth0 &&
	ip -n "$B" addr add "$V4B/24" dev veth0 &&
	ip -n "$A" addr add "$V6A/64" dev veth0 nodad &&
	ip -n "$B" addr add "$V6B/64" dev veth0 nodad &&
	ip -n "$A" link set veth0 up && ip -n "$B" link set veth0 up &&
	ip -n "$A" link set lo up && ip -n "$B" link set lo up ||
		{ fail "cannot build the test hosts"; return 1; }
	# a link just set up drops while carrier and neighbours settle: wait
	# until a probe datagram reaches B over IPv4 and IPv6 (port 9: nobody)
	local i v4 v6
	for ((i = 0; i < 50; i++)); do
		v4=$(mib "$B" Udp NoPorts) v6=$(mib "$B" Udp6 NoPorts)
		send "$A" "$V4B:9" >/dev/null
		send "$A" "[$V6B]:9" >/dev/null
		sleep 0.1
		(($(mib "$B" Udp NoPorts) > v4 && $(mib "$B" Udp6 NoPorts) > v6)) && return 0
	done
	fail "test hosts cannot reach each other"
	return 1
}

ns_inode() { stat -L -c %i "/run/netns/$1"; }

# A kernel counter in a netns, e.g. mib $B Udp RcvbufErrors.
mib() {
	local ns=$1 grp=$2 name=$3
	if [[ $grp == Udp6 || $grp == Ip6 ]]; then
		ip netns exec "$ns" awk -v k="$grp$name" '$1 == k { print $2 }' /proc/net/snmp6
		return
	fi
	ip netns exec "$ns" awk -v g="$grp:" -v k="$name" '
		$1 == g && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == g && hdr { print $(col[k]); exit }' /proc/net/snmp
}

# The `d` (sk_drops) of the UDP socket bound to local port $2 in netns $1.
ss_drops() {
	ip netns exec "$1" ss -uamnH "sport = :$2" |
		grep -o 'skmem:([^)]*)' | grep -o ',d[0-9]*' | head -1 | tr -d ',d'
}

# A field of ss -uam's skmem (r: bytes queued, rb, d, ...) of the UDP
# socket bound to local port $2 in netns $1.
ss_skmem() {
	ip netns exec "$1" ss -uamnH "sport = :$2" |
		grep -o 'skmem:([^)]*)' | head -1 | grep -oE "[(,]$3[0-9]+" | tr -dc 0-9
}

kernel_at_least() { # MAJOR MINOR
	local v=$(uname -r) major minor
	major=${v%%.*} minor=${v#*.} minor=${minor%%[!0-9]*}
	((major > $1 || (major == $1 && minor >= $2)))
}

# Deliveries are counted where the kernel has sock:sk_data_ready (6.6+).
kernel_has_sk_data_ready() { kernel_at_least 6 6; }

# The reason name a rcvbuf drop carries: the kernel's SOCKET_RCVBUFF from
# 5.17; before, udpdrop's site (docs/kernels.md): udp_enqueue:rcvbuf where
# udp_fail_queue_rcv_skb named it, plain udp_enqueue where it could not
# (the classic tracepoint mode, which leaves that raw_tp out; IPv6).
# $1: "unnamed" for those.
rcvbuf_reason() {
	if kernel_at_least 5 17; then
		echo SOCKET_RCVBUFF
	elif [[ ${1:-} == unnamed ]]; then
		echo udp_enqueue
	else
		echo udp_enqueue:rcvbuf
	fi
}

# Classic tracepoint programs run through trace_call_bpf, which skips
# them while another BPF program or map syscall holds the CPU; from 6.7 it
# counts the skips (recursion_misses), before it the drops vanish, and
# udpdrop refuses --attach tracepoint there.
kernel_counts_tp_skips() { kernel_at_least 6 7; }

# queue_drop_via [--no-rx-sk] [--tracepoint]: how a receive-queue drop's
# socket is found on this kernel (JSON attribution): kfree_skb's rx_sk
# (6.11+), else udp_fail_queue_rcv_skb (the classic tracepoint variant
# does not use it), else by the flow. Before 6.10 that tracepoint fires
# after the kfree_skb it belongs to: the drop waits for it (pend_fail).
queue_drop_via() {
	local no_rx_sk= tracepoint=
	for a; do
		[[ $a == --no-rx-sk ]] && no_rx_sk=1
		[[ $a == --tracepoint ]] && tracepoint=1
	done
	if [[ -z $no_rx_sk ]] && kernel_at_least 6 11; then
		echo rx_sk
	elif [[ -z $tracepoint ]]; then
		# 6.10+: it names the skb; before, the drop waits for it (pend_fail)
		echo udp_fail_queue_rcv_skb
	else
		echo flow
	fi
}

# What JSON's rx must say: the count, or null where it is not counted.
rx_or_null() { if kernel_has_sk_data_ready; then echo "$1"; else echo null; fi; }

# Where the kernel has the tracepoint, the summary must count deliveries
# (null totals.rx_overflow: the program did not attach, or top does not
# read them: tracer__read_rx + model__update_rx before model__update).
expect_rx_counted() {
	kernel_has_sk_data_ready || return 0
	[[ $(final .totals.rx_overflow) != null ]] ||
		fail "deliveries not counted (totals.rx_overflow is null)"
}

# start_top ARGS...: udpdrop top --json in the background, ready to trace.
start_top() {
	TOP_OUT=$T/top.json TOP_ERR=$T/top.err
	# empty them first: a previous run's "tracing" line must not count
	: >"$TOP_OUT"
	: >"$TOP_ERR"
	# UDPDROP_WRAP: a command to run it under (e.g. a private mount ns)
	${UDPDROP_WRAP:-} "$UDPDROP" top --json -i "$TOP_INTERVAL" "$@" >"$TOP_OUT" 2>"$TOP_ERR" &
	TOP_PID=$!
	local i
	# a bound, not a wait: the BPF load takes seconds on an emulated CPU
	for ((i = 0; i < 600; i++)); do
		grep -q 'tracing UDP drops' "$TOP_ERR" 2>/dev/null && return 0
		if ! kill -0 "$TOP_PID" 2>/dev/null; then
			wait "$TOP_PID"
			fail "udpdrop top did not start (exit $?): $(cat "$TOP_ERR")"
			TOP_PID=
			return 1
		fi
		sleep 0.1
	done
	fail "udpdrop top not ready after 60 s: $(cat "$TOP_ERR")"
	return 1
}

# stop_top: SIGINT, wait, keep the final summary object in $T/final.json.
stop_top() {
	local rc
	kill -INT "$TOP_PID"
	wait "$TOP_PID"
	rc=$?
	TOP_PID=
	expect_eq "udpdrop exit code" "$rc" 0
	tail -n 1 "$TOP_OUT" >"$T/final.json"
	if [[ $(jq -r .final "$T/final.json" 2>/dev/null) != true ]]; then
		fail "no final summary object: $(tail -c 300 "$TOP_OUT")"
		return 1
	fi
}

final() { jq -r "$@" "$T/final.json"; }

# socket_field LOCAL FIELD: a field of the socket row bound to LOCAL.
socket_field() {
	final --arg l "$1" "[.sockets[] | select(.local == \$l)] | if length == 0 then \"none\" else .[0]$2 end"
}

# iec BYTES: BYTES as udpdrop prints a size (fmt_bytes, src/base/util.c):
# "812 B", "1.5 KiB", "17 MiB".
iec() {
	awk -v b="$1" 'BEGIN {
		split("B KiB MiB GiB TiB", u, " "); v = b; i = 1
		while (i < 5 && (v >= 1024 || (i > 1 && v >= 1023.5))) { v /= 1024; i++ }
		if (i == 1) printf "%d B", b; else if (v < 9.95) printf "%.1f %s", v, u[i]; else printf "%.0f %s", v, u[i]
	}'
}

# fake_pod UID NAMESPACE POD CONTAINER: a Kubernetes pod without
# Kubernetes: its container's cgroup as the kubelet's systemd driver lays
# it out (containerd's scope, under a test cgroup of its own at the root,
# beside any real one: pods.c trusts no other place) and the kubelet's log
# directories in $T/log (pods/, containers/). Sets POD_SCOPE (move a
# process there: echo PID >"$POD_SCOPE/cgroup.procs") and POD_LOGS (for
# --k8s-logs); the cgroups go at cleanup.
fake_pod() {
	local uid=$1 kns=$2 pod=$3 ctr=$4
	# a cgroup hierarchy to make the pod's in: cgroup v2 (alone or the
	# hybrid's unified one), else v1's pids controller
	local root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[[ -n $root ]] || root=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' /proc/mounts)
	[[ -n $root ]] || { fail "no cgroup hierarchy mounted"; return 1; }
	local cid=$(printf '%064d' 7 | tr 0 a) base=$root/kubepods-udt$$.slice
	local pd=$base/kubepods-besteffort.slice/kubepods-besteffort-pod${uid//-/_}.slice
	POD_SCOPE=$pd/cri-containerd-$cid.scope
	POD_LOGS=$T/log
	mkdir -p "$POD_SCOPE" || { fail "mkdir $POD_SCOPE"; return 1; }
	RM_CGROUPS+=("$POD_SCOPE" "$pd" "$base/kubepods-besteffort.slice" "$base")
	mkdir -p "$POD_LOGS/pods/${kns}_${pod}_$uid/$ctr" "$POD_LOGS/containers"
	: >"$POD_LOGS/containers/${pod}_${kns}_$ctr-$cid.log"
}

# start_recv NS ADDR:PORT OPTS...: a receiver; its pid in RECV_PID.
start_recv() {
	local ns=$1 ep=$2 out
	shift 2
	out=$T/recv.$RANDOM
	: >"$out" # there before the first look below
	ip netns exec "$ns" "$UDPTEST" recv "$ep" "$@" >"$out" 2>&1 &
	RECV_PID=$!
	RECV_OUT=$out
	BG_PIDS+=("$RECV_PID")
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q ready "$out" && return 0
		sleep 0.1
	done
	fail "receiver on $ep not ready: $(cat "$out")"
	return 1
}

# stop_recv PID OUT: how many datagrams the receiver read, in total.
# (Called in $(...): a subshell cannot wait for it, so watch its output.)
stop_recv() {
	local i
	kill -USR1 "$1"
	for ((i = 0; i < 400; i++)); do
		grep -q '^received' "$2" && break
		sleep 0.05
	done
	awk '/^received/ { print $2 }' "$2"
}

send() { # NS ARGS...: prints the number sent
	local ns=$1
	shift
	ip netns exec "$ns" "$UDPTEST" send "$@" | awk '/^sent/ { print $2 }'
}

# Drops are counted in softirq right after the send; a short settle lets
# the last ones land before we read ground truth.
settle() { sleep "${1:-0.5}"; }

# "1234567" -> "1,234,567", as udpdrop prints counts.
commas() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"; }

# The full-screen view under a private tmux server, in a real pty.
# tui_start COLS LINES ARGS...: runs udpdrop top ARGS; its exit code goes
# to $T/tui.rc, its pid to $T/tui.pid, its stderr to $T/tui.err.
tui_start() {
	local cols=$1 lines=$2
	shift 2
	# a server of its own each time: one just killed may still be exiting
	# under its name ($$ is run.sh's in every test; $BASHPID is this test's)
	TMUX_SOCK=udt-$BASHPID-${#TMUX_SOCKS[@]}
	TMUX_SOCKS+=("$TMUX_SOCK")
	: >"$T/tui.err"
	rm -f "$T/tui.rc" "$T/tui.pid"
	# the shell stays after udpdrop exits, so the screen it leaves can be read
	tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s tui -x "$cols" -y "$lines" \
		"echo \$\$ >$T/tui.pid; LANG=C.UTF-8 TERM=tmux-256color $UDPDROP top $* 2>$T/tui.err; echo \$? >$T/tui.rc; sleep 600" ||
		{ fail "tmux did not start"; return 1; }
	tui_wait 'udpdrop top - ' || { fail "the view did not come up: $(cat "$T/tui.err")"; return 1; }
}

tui_screen() { tmux -L "$TMUX_SOCK" capture-pane -p -t tui; }
tui_keys() { tmux -L "$TMUX_SOCK" send-keys -t tui "$@"; }
tui_flag() { tmux -L "$TMUX_SOCK" display-message -p -t tui "#{$1}"; }

# tui_wait REGEX [TENTHS]: until the screen matches (default 10 s).
tui_wait() {
	local i
	for ((i = 0; i < ${2:-100}; i++)); do
		tui_screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

# tui_line REGEX: the first screen line that matches.
tui_line() { tui_screen | grep -E -m1 -- "$1"; }
# tui_lineno REGEX: its line number (0 if none).
tui_lineno() { tui_screen | grep -nE -m1 -- "$1" | cut -d: -f1 | grep . || echo 0; }

# tui_exit: wait for udpdrop to leave; prints its exit code.
tui_exit() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -s $T/tui.rc ]] && break
		sleep 0.1
	done
	cat "$T/tui.rc" 2>/dev/null || echo "still running"
}
