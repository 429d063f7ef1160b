# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop top: each cause counted exactly on a real socket or flow (rcvbuf,
# no_socket, checksum, netfilter, frag_timeout, socket_filter, qdisc, GSO,
# IPv6), the attach variants, deliveries, filters, signals, the install,
# sockets that close or restart, and the full-screen view. Sourced by
# run.sh (lib.sh's helpers).

# rcvbuf: a receiver that never reads, a small SO_RCVBUF.
# $1: how the socket must have been found (JSON "attribution");
# further args go to udpdrop (the attach-variant tests reuse this).
rcvbuf_case() {
	local via=$1 sent got dropped
	shift
	setup_hosts || return
	start_recv "$B" "$V4B:5001" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp RcvbufErrors)
	start_top -N "$B" "$@" || return
	sent=$(send "$A" "$V4B:5001" -c 300 -s 1000)
	settle
	local d=$(ss_drops "$B" 5001)
	stop_top || return
	got=$(stop_recv "$rpid" "$rout")
	dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_gt dropped "$dropped" 0
	expect_eq "socket drops" "$(socket_field "$V4B:5001" .drops)" "$dropped"
	expect_eq "socket cause rcvbuf" "$(socket_field "$V4B:5001" .causes.rcvbuf)" "$dropped"
	local how=named r
	[[ " $* " == *" tracepoint "* ]] && how=unnamed
	r=$(rcvbuf_reason "$how")
	expect_eq "reason $r" "$(socket_field "$V4B:5001" ".reasons[\"$r\"]")" "$dropped"
	expect_eq "ss -uam d" "$d" "$dropped"
	expect_eq "sk_drops in JSON" "$(socket_field "$V4B:5001" .sk_drops)" "$dropped"
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	expect_eq "counters.UdpRcvbufErrors" "$(final ".counters[\"$(ns_inode "$B")\"].UdpRcvbufErrors")" "$dropped"
	expect_eq "owner comm" "$(socket_field "$V4B:5001" .comm)" udptest
	expect_eq "owner pid" "$(socket_field "$V4B:5001" .pid)" "$rpid"
	expect_eq "totals.drops" "$(final .totals.drops)" "$dropped"
	expect_eq "totals.attributed" "$(final .totals.attributed)" "$dropped"
	expect_eq "netns" "$(socket_field "$V4B:5001" .netns)" "$(ns_inode "$B")"
	expect_eq "attribution" "$(socket_field "$V4B:5001" '.attribution | join(",")')" "$via"
	# never read: what was delivered is what the receiver found queued
	expect_rx_counted
	expect_eq "rx (datagrams still queued)" "$(socket_field "$V4B:5001" .rx)" "$(rx_or_null "$got")"
}

test_rcvbuf() { rcvbuf_case "$(queue_drop_via)"; }
# the pre-6.11 path: the socket handed over by udp_fail_queue_rcv_skb
test_rcvbuf_raw_tp_no_rx_sk() {
	rcvbuf_case "$(queue_drop_via --no-rx-sk)" --attach raw_tp --no-rx-sk
}
# the same with tp_btf, where the program still reads rx_sk and the
# classifier (past its early fast path) sets it aside
test_rcvbuf_no_rx_sk() {
	rcvbuf_case "$(queue_drop_via --no-rx-sk)" --no-rx-sk
}

# Classic tracepoints need tracefs: with-tracefs.sh mounts it in a private
# mount namespace for udpdrop alone.
test_rcvbuf_tracepoint() {
	# before 6.7 the mode must be refused: checked, and said so (the
	# kernel matrix shows the cell as refused, not as exact)
	kernel_counts_tp_skips || { tracepoint_refused; return; }
	# no refresh while the datagrams drop: a classic tracepoint's program
	# is skipped (and counted missed) on a CPU inside a BPF map syscall,
	# and a one-CPU guest's softirq can run inside top's map reads
	TOP_INTERVAL=60 UDPDROP_WRAP=tests/integration/with-tracefs.sh \
		rcvbuf_case "$(queue_drop_via --tracepoint)" --attach tracepoint
}
# no socket on the record at all: found by the packet's destination
test_rcvbuf_tracepoint_no_rx_sk() {
	kernel_counts_tp_skips || { tracepoint_refused; return; }
	TOP_INTERVAL=60 UDPDROP_WRAP=tests/integration/with-tracefs.sh \
		rcvbuf_case flow --attach tracepoint --no-rx-sk
}

# rcvbuf with datagrams larger than the MTU: one drop per datagram, and
# the fragments show as skb events (the reassembled skb + its frag_list).
test_rcvbuf_fragmented() {
	local sent got dropped
	setup_hosts || return
	start_recv "$B" "$V4B:5002" --rcvbuf 16384 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp RcvbufErrors)
	start_top -N "$B" || return
	sent=$(send "$A" "$V4B:5002" -c 100 -s 4000)
	settle
	local d=$(ss_drops "$B" 5002)
	stop_top || return
	got=$(stop_recv "$rpid" "$rout")
	dropped=$((sent - got))
	expect_gt dropped "$dropped" 0
	expect_eq "socket drops (datagrams)" "$(socket_field "$V4B:5002" .drops)" "$dropped"
	expect_eq "skb events (3 fragments each)" "$(socket_field "$V4B:5002" .skb_events)" "$((3 * dropped))"
	expect_eq "ss -uam d" "$d" "$dropped"
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
}

# Deliveries (sock:sk_data_ready, kernels 6.6+): a receiver that never
# reads. Every datagram sent is delivered or dropped, the delivered ones
# are all still queued, and nothing is read, so the queue only grew: its
# peak is the bytes queued at the end (ss -uam's r), within the buffer.
rx_case() {
	local sent got
	setup_hosts || return
	start_recv "$B" "$V4B:5060" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_top -N "$B" -a "$@" || return # -a: a row from the first interval
	sent=$(send "$A" "$V4B:5060" -c 200 -s 1000)
	settle
	local rmem=$(ss_skmem "$B" 5060 r)
	stop_top || return
	got=$(stop_recv "$rpid" "$rout")
	local rx=$(socket_field "$V4B:5060" .rx) drops=$(socket_field "$V4B:5060" .drops)
	expect_eq sent "$sent" 200
	expect_gt "dropped" "$drops" 0
	expect_gt "queued" "$got" 0
	expect_rx_counted
	if ! kernel_has_sk_data_ready; then
		expect_eq "rx unknown before 6.6" "$rx" null
		return
	fi
	expect_eq "rx = still queued (read at the end)" "$rx" "$got"
	[[ $rx =~ ^[0-9]+$ ]] || return
	expect_eq "rx + drops = sent" "$((rx + drops))" "$sent"
	expect_eq "queue_peak = bytes queued at the end (ss r)" "$(socket_field "$V4B:5060" .queue_peak)" "$rmem"
	local peak=$(socket_field "$V4B:5060" .queue_peak) rcvbuf=$(socket_field "$V4B:5060" .rcvbuf)
	expect_eq "queue_peak $peak <= rcvbuf $rcvbuf" "$((peak <= rcvbuf))" 1
	expect_eq "totals.rx_overflow" "$(final .totals.rx_overflow)" 0
	# each interval's rate times its length adds up to the last count shown
	expect_eq "interval rates add up to rx" "$(jq -s --arg l "$V4B:5060" '
		[.[] | select(.final == false)] as $o | [$o[] | .interval as $i |
		.sockets[] | select(.local == $l) | .rx_per_s * $i] | add // 0 | round |
		. == ([$o[-1].sockets[]? | select(.local == $l) | .rx][0] // 0)' "$TOP_OUT")" true
}

test_rx() { rx_case; }
test_rx_raw_tp() { rx_case --attach raw_tp; }
test_rx_tracepoint() {
	kernel_counts_tp_skips || { tracepoint_refused; return; }
	UDPDROP_WRAP=tests/integration/with-tracefs.sh rx_case --attach tracepoint
}

# Before 6.7 trace_call_bpf skips a classic tracepoint program without
# counting it (while any BPF map syscall or program holds the CPU): the
# variant cannot be exact there, so it is refused, exit 4, one line,
# nothing left loaded; auto takes tp_btf. From 6.7 the skips are counted
# (missed) and the variant loads.
# tracepoint_refused: --attach tracepoint where the kernel does not count
# the runs it skips: one line, exit 4, nothing left loaded.
tracepoint_refused() {
	local progs rc
	progs() { bpftool prog show 2>/dev/null | grep -c ' name udpdrop_'; }
	local before=$(progs)
	tests/integration/with-tracefs.sh "$UDPDROP" top --attach tracepoint -i 0.2 -n 1 -j \
		>"$T/tp.out" 2>"$T/tp.err"
	rc=$?
	expect_eq "exit code" "$rc" 4
	expect_eq "one line" "$(wc -l <"$T/tp.err")" 1
	grep -q "^udpdrop: --attach tracepoint: this kernel skips classic tracepoint programs without counting the skips (trace_call_bpf's recursion_misses, Linux 6.7+): drops would be lost silently; use tp_btf or raw_tp" "$T/tp.err" ||
		fail "message: $(cat "$T/tp.err")"
	expect_eq "nothing left loaded" "$(progs)" "$before"
	expect_eq "no output" "$(wc -c <"$T/tp.out")" 0
	((rc == 4)) && echo "    refused as expected: $(sed 's/^udpdrop: //' "$T/tp.err")"
}

test_tracepoint_refused_without_skip_count() {
	local rc
	if ! kernel_counts_tp_skips; then
		tracepoint_refused
		return
	fi
	tests/integration/with-tracefs.sh "$UDPDROP" top --attach tracepoint -i 0.2 -n 1 -j \
		>"$T/tp.out" 2>"$T/tp.err"
	rc=$?
	expect_eq "exit code (skips counted: loads)" "$rc" 0
	expect_eq "attach" "$(jq -rs '.[-1].attach' "$T/tp.out")" tracepoint
}

# A receiver that reads everything: all delivered, nothing dropped; a quiet
# socket, so listed with --all.
test_rx_read_all() {
	setup_hosts || return
	start_recv "$B" "$V4B:5061" --read --rcvbuf 1000000 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_top -N "$B" -a || return
	local sent=$(send "$A" "$V4B:5061" -c 300 -s 100)
	settle
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq sent "$sent" 300
	expect_eq "read by the app" "$got" "$sent"
	expect_eq "socket drops" "$(socket_field "$V4B:5061" .drops)" 0
	expect_rx_counted
	expect_eq "rx = sent = read" "$(socket_field "$V4B:5061" .rx)" "$(rx_or_null "$sent")"
	kernel_has_sk_data_ready || return
	expect_gt "queue_peak" "$(socket_field "$V4B:5061" .queue_peak)" 0
	expect_gt "rx_per_s (the summary's average)" "$(socket_field "$V4B:5061" '.rx_per_s | ceil')" 0
}

# Many sockets: 400 on one CPU (the sender pinned: veth delivers on the
# sending CPU) are more than the 256 slots of its table, so at least 144
# are counted in the hash map; with --map-entries 64, at least 80 find it
# full too, and their datagrams are counted as rx_overflow, not lost.
rx_many_case() {
	local n=400 want=$1
	shift
	setup_hosts || return
	kernel_has_sk_data_ready || { echo "    skip: no sock:sk_data_ready"; return; }
	start_recv "$B" "$V4B:5100" --sockets "$n" || return
	start_top -N "$B" -a "$@" || return
	local sent=$(ip netns exec "$A" taskset -c 0 "$UDPTEST" send "$V4B:5100" \
		--ports "$n" -c $((2 * n)) -s 100 | awk '/^sent/ { print $2 }')
	settle
	stop_top || return
	local rx='[.sockets[] | select(.local | startswith("'"$V4B:"'")) | .rx]'
	expect_eq sent "$sent" $((2 * n))
	expect_eq "rows" "$(final "$rx | length")" "$n"
	expect_rx_counted
	if [[ $want == all ]]; then
		expect_eq "rx of each socket" "$(final "$rx | unique | join(\",\")")" 2
		expect_eq "totals.rx_overflow" "$(final .totals.rx_overflow)" 0
		return
	fi
	expect_gt "totals.rx_overflow" "$(final .totals.rx_overflow)" 0
	expect_eq "each socket all or nothing" "$(final "$rx | all(. == 0 or . == 2)")" true
	expect_eq "rx + rx_overflow = sent" "$(final "($rx | add) + .totals.rx_overflow")" "$sent"
}

test_rx_many_sockets() { rx_many_case all; }
test_rx_map_full() { rx_many_case some --map-entries 64; }

test_no_socket() {
	setup_hosts || return
	local before=$(mib "$B" Udp NoPorts)
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5999" -c 50)
	settle
	stop_top || return
	expect_eq sent "$sent" 50
	expect_eq "UdpNoPorts delta" "$(($(mib "$B" Udp NoPorts) - before))" 50
	expect_eq "unattributed no_socket drops" \
		"$(final "[.unattributed[] | select(.cause == \"no_socket\" and .flow == \"$V4A -> $V4B:5999\")][0].drops")" 50
	expect_eq "no socket rows" "$(final '.sockets | length')" 0
	expect_eq "reconcile no_socket" \
		"$(final '[.reconcile[] | select(.cause == "no_socket")][0] | "\(.kernel) \(.udpdrop)"')" "50 50"
}

# A stray sender to a port a connected socket holds: the kernel counts
# UdpNoPorts (the socket takes only its peer's datagrams), and every view
# says the port is taken, never "nothing listens on port 40000".
test_no_socket_port_connected() {
	setup_hosts || return
	start_recv "$B" "$V4B:40000" --connect "$V4A:53" || return
	local before=$(mib "$B" Udp NoPorts)
	start_record "$T/c.data" -N "$B" -i "$TOP_INTERVAL" || return
	start_top -N "$B" || return
	start_doctor -N "$B" -d 600 || return
	local sent=$(send "$A" "$V4B:40000" -c 20 --sport 5353)
	settle
	kill -INT "$DOC_PID"
	wait_doctor
	stop_record
	stop_top || return
	expect_eq sent "$sent" 20
	expect_eq "UdpNoPorts delta" "$(($(mib "$B" Udp NoPorts) - before))" 20
	local sel='[.unattributed[] | select(.cause == "no_socket" and .dport == 40000)][0]'
	expect_eq "top: no_socket drops" "$(final "$sel.drops")" 20
	local want="no socket on port 40000 takes datagrams from this sender"
	expect_eq "top: advice" "$(final "$sel.advice[0].what")" "$want"
	final "$sel.advice[0].evidence" | grep -q "connected to $V4A:53" ||
		fail "top: the evidence does not name the socket's peer: $(final "$sel.advice[0].evidence")"
	expect_eq "doctor: finding" "$(dq '[.findings[] | select(.cause == "no_socket")][0].what')" "$want"
	"$UDPDROP" report --json "$T/c.data" >"$T/c.json" 2>"$T/c.err" || fail "report: $(cat "$T/c.err")"
	expect_eq "report: advice" \
		"$(jq -r '[.advice[] | select(.cause == "no_socket")][0].what' "$T/c.json")" "$want"
	grep -rq "nothing listens on port 40000" "$T/c.json" "$T/doc.json" "$T/final.json" &&
		fail "a view says nothing listens on port 40000"
	return 0
}

test_checksum() {
	setup_hosts || return
	start_recv "$B" "$V4B:5003" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp InCsumErrors)
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5003" -c 40 --bad-csum --src "$V4A")
	settle 1
	local d=$(ss_drops "$B" 5003)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq sent "$sent" 40
	expect_eq "read by the app" "$got" 0
	expect_eq "UdpInCsumErrors delta" "$(($(mib "$B" Udp InCsumErrors) - before))" 40
	expect_eq "socket cause checksum" "$(socket_field "$V4B:5003" .causes.checksum)" 40
	expect_eq "ss -uam d" "$d" 40
}

test_netfilter() {
	setup_hosts || return
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table inet udt {
		chain in {
			type filter hook input priority 0;
			udp dport 5004 counter drop
		}
	}
	EOF
	start_recv "$B" "$V4B:5004" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5004" -c 60)
	settle
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	local nftn=$(ip netns exec "$B" nft -j list chain inet udt in |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets][0]')
	expect_eq "read by the app" "$got" 0
	expect_eq "nft counter" "$nftn" 60
	expect_eq "socket cause netfilter" "$(socket_field "$V4B:5004" .causes.netfilter)" 60
	expect_eq "reason NETFILTER_DROP" "$(socket_field "$V4B:5004" .reasons.NETFILTER_DROP)" 60
}

# Three fragments each; nft drops the last one before reassembly, the
# other two wait ipfrag_time (1 s) and expire: one frag_timeout per datagram.
# frag_timeout_case PORT START: START (start_top, or a variant) with -N B.
frag_timeout_case() {
	local port=$1 start=$2
	setup_hosts || return
	lose_last_fragments "$B" || { fail "nft"; return; }
	start_recv "$B" "$V4B:$port" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local fails=$(mib "$B" Ip ReasmFails) tmo=$(mib "$B" Ip ReasmTimeout)
	"$start" -N "$B" || return
	send "$A" "$V4B:$port" -c 30 -s 3000 >/dev/null
	settle 3 # ipfrag_time plus the timer's slack
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq "read by the app" "$got" 0
	expect_eq "IpReasmFails delta" "$(($(mib "$B" Ip ReasmFails) - fails))" 30
	expect_eq "IpReasmTimeout delta" "$(($(mib "$B" Ip ReasmTimeout) - tmo))" 30
	expect_eq "socket cause frag_timeout" "$(socket_field "$V4B:$port" .causes.frag_timeout)" 30
	expect_eq "socket drops (one per datagram)" "$(socket_field "$V4B:$port" .drops)" 30
	expect_eq "totals.causes.frag_timeout" "$(final .totals.causes.frag_timeout)" 30
	# nft's fragment is no datagram of its own: the reassembly's loss counts
	expect_eq "totals.drops (no double count)" "$(final .totals.drops)" 30
	expect_eq "fragment skb events (2 timed out + 1 by nft, each)" "$(final .totals.skb_events)" 90
	expect_eq "reconcile frag_timeout" \
		"$(final '[.reconcile[] | select(.cause == "frag_timeout")][0] | "\(.kernel) \(.udpdrop)"')" "30 30"
}

test_frag_timeout() { frag_timeout_case 5005 start_top; }

# no_head_case WHERE PORT: each datagram's first fragment lost, so the
# kernel's reassembly timer has no head to free, only the queue's other
# fragments (inet_frag_destroy's purge: no device on them, any task's
# netns) and still counts the datagram in IpReasmTimeout. WHERE: "sender"
# (A sends each datagram's fragments but the first: B never sees it) or
# "here" (B's nft drops them before reassembly: a netfilter drop, which
# counts the datagram). top -N B counts each datagram once, in netns B,
# and every fragment skb.
no_head_case() {
	local where=$1 port=$2
	setup_hosts || return
	TIMER_DROPS=1
	ip netns exec "$B" sysctl -qw net.ipv4.ipfrag_time=1 || return 1
	if [[ $where == here ]]; then
		ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return 1; }
		table ip udt {
			chain pre {
				type filter hook prerouting priority -450;
				ip frag-off & 0x1fff == 0 ip frag-off & 0x2000 != 0 counter drop
			}
		}
		EOF
	fi
	start_recv "$B" "$V4B:$port" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local fails=$(mib "$B" Ip ReasmFails) tmo=$(mib "$B" Ip ReasmTimeout)
	start_top -N "$B" || return
	start_record "$T/nh.data" -N "$B" -i 0.5 || return
	if [[ $where == sender ]]; then
		expect_eq sent "$(send "$A" "$V4B:$port" -c 30 -s 3000 --no-first-frag --src "$V4A")" 30
	else
		send "$A" "$V4B:$port" -c 30 -s 3000 >/dev/null
	fi
	settle 3 # ipfrag_time plus the timer's slack
	stop_record
	stop_top || return
	"$UDPDROP" report -j "$T/nh.data" >"$T/nh.json" || fail "report of the recording"
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq "read by the app" "$got" 0
	expect_eq "IpReasmFails delta" "$(($(mib "$B" Ip ReasmFails) - fails))" 30
	expect_eq "IpReasmTimeout delta" "$(($(mib "$B" Ip ReasmTimeout) - tmo))" 30
	expect_eq "totals.drops (one per datagram)" "$(final .totals.drops)" 30
}

# Lost on the sender's side: the timeout is each datagram's only trace
# here, a frag_timeout flow to B's address (no port: its fragments after
# the first have none), in netns B, as the kernel counts it.
test_frag_timeout_no_head() {
	no_head_case sender 5007 || return
	local ns=$(ns_inode "$B")
	expect_eq "totals.causes.frag_timeout" "$(final .totals.causes.frag_timeout)" 30
	expect_eq "fragment skb events (the 2 after the first, each)" "$(final .totals.skb_events)" 60
	expect_eq "the flow: netns B, to B's address" \
		"$(final -c "[.unattributed[] | select(.cause == \"frag_timeout\") | {netns, daddr, drops}]")" \
		"[{\"netns\":$ns,\"daddr\":\"$V4B\",\"drops\":30}]"
	expect_eq "reconcile frag_timeout" \
		"$(final '[.reconcile[] | select(.cause == "frag_timeout")][0] | "\(.kernel) \(.udpdrop)"')" "30 30"
	# the recording has them where top has them
	expect_eq "report: the flow" \
		"$(jq -c "[.unattributed[] | select(.cause == \"frag_timeout\") | {netns, daddr, drops}]" "$T/nh.json")" \
		"[{\"netns\":$ns,\"daddr\":\"$V4B\",\"drops\":30}]"
	expect_eq "report: reconcile frag_timeout" \
		"$(jq -r '[.reconcile[] | select(.cause == "frag_timeout")][0] | "\(.kernel) \(.udpdrop) \(.status)"' "$T/nh.json")" \
		"30 30 match"
}

# Dropped here: the netfilter drop counts the datagram (on the socket, by
# its first fragment's ports); the timeout that follows is the same
# datagram's, counted once.
test_frag_timeout_first_dropped() {
	no_head_case here 5008 || return
	expect_eq "socket cause netfilter" "$(socket_field "$V4B:5008" .causes.netfilter)" 30
	expect_eq "fragment skb events (1 by nft + 2 timed out, each)" "$(final .totals.skb_events)" 90
	expect_eq "frag_timeout skb events, netns B" \
		"$(final '[.unattributed[] | select(.cause == "frag_timeout") | .skb_events] | add')" 60
	expect_eq "frag_timeout drops (the datagrams are netfilter's)" \
		"$(final '[.unattributed[] | select(.cause == "frag_timeout") | .drops] | add')" 0
	# the kernel counts each timeout: udpdrop counts them as its unit
	expect_eq "reconcile frag_timeout (kernel, udpdrop, its datagrams)" \
		"$(final '[.reconcile[] | select(.cause == "frag_timeout")][0] | "\(.kernel) \(.udpdrop) \(.udpdrop_datagrams)"')" \
		"30 30 0"
	expect_eq "report: reconcile frag_timeout" \
		"$(jq -r '[.reconcile[] | select(.cause == "frag_timeout")][0] | "\(.kernel) \(.udpdrop) \(.status)"' "$T/nh.json")" \
		"30 30 match"
	expect_eq "report: drops (one per datagram)" "$(jq .totals.drops "$T/nh.json")" 30
	"$UDPDROP" report "$T/nh.data" >"$T/nh.txt" 2>&1
	grep -q "30 of them are datagrams counted as another cause's: their first fragment was dropped here" "$T/nh.txt" ||
		fail "report text: no note on the timeouts' datagrams: $(grep -i frag_timeout "$T/nh.txt")"
}

test_socket_filter() {
	setup_hosts || return
	start_recv "$B" "$V4B:5006" --filter-drop || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp InErrors)
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5006" -c 40)
	settle
	local d=$(ss_drops "$B" 5006)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq "read by the app" "$got" 0
	expect_eq "socket cause socket_filter" "$(socket_field "$V4B:5006" .causes.socket_filter)" 40
	expect_eq "ss -uam d" "$d" 40
	expect_eq "UdpInErrors delta" "$(($(mib "$B" Udp InErrors) - before))" 40
}

# Sender side: a tbf qdisc with a tiny limit on the sender's veth.
test_qdisc() {
	setup_hosts || return
	ip netns exec "$A" tc qdisc add dev veth0 root tbf rate 1mbit burst 1600 limit 1600 ||
		{ fail "tc tbf"; return; }
	start_recv "$B" "$V4B:5007" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$A" Udp SndbufErrors)
	start_top -N "$A" || return
	# the sender lingers so its socket is still there to be named
	ip netns exec "$A" "$UDPTEST" send "$V4B:5007" -c 200 -s 1000 --sport 6007 --linger-ms 1500 >"$T/send.out" &
	local spid=$!
	BG_PIDS+=("$spid")
	sleep 1
	stop_top || return
	wait "$spid"
	local sent=$(awk '/^sent/ { print $2 }' "$T/send.out")
	settle 1.5 # what tbf queued drains at 1 Mbit/s
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_eq sent "$sent" 200
	expect_gt "dropped at the qdisc" "$dropped" 0
	# the sender binds the wildcard address: ss shows it as *:6007 too
	expect_eq "sender socket cause qdisc" "$(socket_field "*:6007" .causes.qdisc)" "$dropped"
	expect_eq "UdpSndbufErrors delta" "$(($(mib "$A" Udp SndbufErrors) - before))" "$dropped"
	expect_eq "netns of the sender" "$(socket_field "*:6007" .netns)" "$(ns_inode "$A")"
}

# Sender side with UDP GSO: each send is one 4000-byte buffer the kernel
# cuts into four 1000-byte datagrams. tbf's burst lets a whole buffer pass
# unsegmented and its limit queues only two, so the rest are dropped whole:
# one skb event, four datagrams. The unit is the datagram.
test_gso_qdisc() {
	setup_hosts || return
	ip netns exec "$A" tc qdisc add dev veth0 root tbf rate 1mbit burst 20000 limit 10000 ||
		{ fail "tc tbf"; return; }
	start_recv "$B" "$V4B:5050" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$A" Udp SndbufErrors)
	start_top -N "$A" || return
	ip netns exec "$A" "$UDPTEST" send "$V4B:5050" -c 50 -s 4000 --gso 1000 --sport 6050 \
		--linger-ms 1500 >"$T/send.out" &
	local spid=$!
	BG_PIDS+=("$spid")
	sleep 1
	stop_top || return
	wait "$spid"
	local sent=$(awk '/^sent/ { print $2 }' "$T/send.out")
	settle 1.5 # what tbf queued drains at 1 Mbit/s
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	local drops=$(socket_field "*:6050" .drops) skbs=$(socket_field "*:6050" .skb_events)
	expect_eq "sent (datagrams, 4 per buffer)" "$sent" 200
	expect_eq "buffers" "$(awk '/^sent/ { print $6 }' "$T/send.out")" 50
	expect_gt "dropped at the qdisc" "$dropped" 0
	expect_eq "sender socket drops (datagrams)" "$drops" "$dropped"
	expect_eq "sender socket cause qdisc" "$(socket_field "*:6050" .causes.qdisc)" "$dropped"
	expect_gt "fewer skb events than drops" "$drops" "$skbs"
	expect_eq "skb events (one per buffer)" "$((skbs * 4))" "$drops"
	# the kernel counts a failed send once, however many datagrams it held
	expect_eq "UdpSndbufErrors delta (per buffer)" "$(($(mib "$A" Udp SndbufErrors) - before))" "$skbs"
}

# Receiver side with GSO and GRO: the UDP_GRO receiver takes the 4-datagram
# buffers whole, so a full receive buffer drops them whole too.
# GSO into a UDP_GRO socket with a small buffer. Where the skbs reach
# the socket whole (veth passes UDP_SEGMENT skbs on since 5.18 or so;
# 5.10's cuts them first), the kernel counts one drop per skb (sk_drops,
# UdpRcvbufErrors) and udpdrop one per datagram, and says how many came
# in how many such skbs: drops - gro_datagrams + gro_skbs is the kernel's
# count on every kernel, and the reconciliation compares that.
test_gso_gro_rcvbuf() {
	setup_hosts || return
	start_recv "$B" "$V4B:5051" --rcvbuf 16384 --gro || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp RcvbufErrors)
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5051" -c 50 -s 4000 --gso 1000)
	settle
	local d=$(ss_drops "$B" 5051)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	local drops=$(socket_field "$V4B:5051" .drops)
	local kernel=$(($(mib "$B" Udp RcvbufErrors) - before))
	expect_eq "sent (datagrams, 4 per buffer)" "$sent" 200
	expect_gt "dropped" "$dropped" 0
	expect_eq "socket drops (datagrams)" "$drops" "$dropped"
	expect_eq "socket cause rcvbuf" "$(socket_field "$V4B:5051" .causes.rcvbuf)" "$dropped"
	expect_eq "ss -uam d = UdpRcvbufErrors delta" "$d" "$kernel"
	# the row says how many of its datagrams came in how many GRO skbs
	local gd=$(socket_field "$V4B:5051" .gro_datagrams) gs=$(socket_field "$V4B:5051" .gro_skbs)
	expect_eq "drops - gro_datagrams + gro_skbs = the kernel's count" "$((drops - gd + gs))" "$kernel"
	if ((kernel < dropped)); then
		# whole skbs (this kernel's veth passes them on): 4 datagrams each
		expect_eq "gro_skbs, gro_datagrams (4 each)" "$gs $gd" "$kernel $((kernel * 4))"
	else
		echo "    (this kernel cut the skbs into datagrams before the socket: no GRO skbs)"
		expect_eq "gro_skbs, gro_datagrams" "$gs $gd" "0 0"
	fi
	expect_eq "reconcile rcvbuf (kernel, udpdrop per skb, udpdrop's datagrams, match)" \
		"$(final '[.reconcile[] | select(.cause == "rcvbuf")][0] | "\(.kernel) \(.udpdrop) \(.udpdrop_datagrams) \(.match)"')" \
		"$kernel $kernel $dropped true"
}

# GSO skbs to a port nobody listens on: where they arrive whole, the
# kernel counts one UdpNoPorts (and answers one ICMP) per skb, udpdrop
# its datagrams; the reconciliation compares the kernel's unit and
# matches, in top and in report.
test_gso_no_socket() {
	setup_hosts || return
	local before=$(mib "$B" Udp NoPorts)
	start_record "$T/g.data" -N "$B" -i "$TOP_INTERVAL" || return
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5052" -c 30 -s 4000 --gso 1000)
	settle
	stop_record
	stop_top || return
	expect_eq "sent (datagrams, 4 per buffer)" "$sent" 120
	local kernel=$(($(mib "$B" Udp NoPorts) - before)) gs=30 gd=120
	if ((kernel == 120)); then
		echo "    (this kernel cut the skbs into datagrams before UDP: no GRO skbs)"
		gs=0 gd=0
	else
		expect_eq "UdpNoPorts delta (per skb)" "$kernel" 30
	fi
	local sel='[.unattributed[] | select(.cause == "no_socket" and .dport == 5052)][0]'
	local want="120 $kernel $gs $gd"
	expect_eq "no_socket flow: drops, skb_events, gro_skbs, gro_datagrams" \
		"$(final "$sel"' | "\(.drops) \(.skb_events) \(.gro_skbs) \(.gro_datagrams)"')" "$want"
	expect_eq "reconcile no_socket" \
		"$(final '[.reconcile[] | select(.cause == "no_socket")][0] | "\(.kernel) \(.udpdrop) \(.udpdrop_datagrams) \(.match)"')" \
		"$kernel $kernel 120 true"
	# the recording says the same
	"$UDPDROP" report --json "$T/g.data" >"$T/g.json" 2>"$T/g.err" || fail "report: $(cat "$T/g.err")"
	expect_eq "report: no_socket flow" \
		"$(jq -r "$sel"' | "\(.drops) \(.skb_events) \(.gro_skbs) \(.gro_datagrams)"' "$T/g.json")" "$want"
	expect_eq "report: reconcile no_socket" \
		"$(jq -r '[.reconcile[] | select(.cause == "no_socket")][0] | "\(.kernel) \(.udpdrop) \(.udpdrop_datagrams) \(.status)"' "$T/g.json")" \
		"$kernel $kernel 120 match"
	"$UDPDROP" report "$T/g.data" >"$T/g.txt" 2>>"$T/g.err"
	if ((gs)) && ! grep -q "of 120 datagrams: a GSO/GRO skb counted once" "$T/g.txt"; then
		fail "report text: no word on GSO/GRO skbs: $(grep -A3 Reconciliation "$T/g.txt")"
	fi
	return 0
}

test_ipv6_rcvbuf() {
	setup_hosts || return
	start_recv "$B" "[$V6B]:5008" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp6 RcvbufErrors)
	start_top -N "$B" || return
	local sent=$(send "$A" "[$V6B]:5008" -c 300 -s 1000)
	settle
	local d=$(ss_drops "$B" 5008)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_gt dropped "$dropped" 0
	expect_eq "socket drops" "$(socket_field "[$V6B]:5008" .drops)" "$dropped"
	expect_eq "family" "$(socket_field "[$V6B]:5008" .family)" inet6
	expect_eq "socket cause rcvbuf" "$(socket_field "[$V6B]:5008" .causes.rcvbuf)" "$dropped"
	local r=$(rcvbuf_reason unnamed)
	expect_eq "reason $r" "$(socket_field "[$V6B]:5008" ".reasons[\"$r\"]")" "$dropped"
	expect_eq "totals.drops" "$(final .totals.drops)" "$dropped"
	expect_eq "ss -uam d" "$d" "$dropped"
	expect_eq "Udp6RcvbufErrors delta" "$(($(mib "$B" Udp6 RcvbufErrors) - before))" "$dropped"
}

test_ipv6_no_socket() {
	setup_hosts || return
	local before=$(mib "$B" Udp6 NoPorts)
	start_top -N "$B" || return
	local sent=$(send "$A" "[$V6B]:5998" -c 25)
	settle
	stop_top || return
	expect_eq sent "$sent" 25
	expect_eq "Udp6NoPorts delta" "$(($(mib "$B" Udp6 NoPorts) - before))" 25
	expect_eq "unattributed no_socket (IPv6)" \
		"$(final "[.unattributed[] | select(.cause == \"no_socket\" and .flow == \"$V6A -> [$V6B]:5998\")][0].drops")" 25
}

test_two_sockets() {
	setup_hosts || return
	start_recv "$B" "$V4B:5010" --rcvbuf 4096 || return
	local p1=$RECV_PID o1=$RECV_OUT
	start_recv "$B" "$V4B:5011" --rcvbuf 4096 || return
	local p2=$RECV_PID o2=$RECV_OUT
	start_top -N "$B" || return
	# both senders at once (a small gap stretches them so they overlap)
	send "$A" "$V4B:5010" -c 100 -s 1000 --gap-us 100 >"$T/s1" &
	local j1=$!
	send "$A" "$V4B:5011" -c 250 -s 1000 --gap-us 100 >"$T/s2" &
	local j2=$!
	BG_PIDS+=("$j1" "$j2")
	wait "$j1" "$j2"
	local s1=$(cat "$T/s1") s2=$(cat "$T/s2")
	expect_eq "sent to 5010" "$s1" 100
	expect_eq "sent to 5011" "$s2" 250
	settle
	stop_top || return
	local g1=$(stop_recv "$p1" "$o1") g2=$(stop_recv "$p2" "$o2")
	expect_eq "socket 5010 drops" "$(socket_field "$V4B:5010" .drops)" "$((s1 - g1))"
	expect_eq "socket 5011 drops" "$(socket_field "$V4B:5011" .drops)" "$((s2 - g2))"
	expect_eq "socket 5010 pid" "$(socket_field "$V4B:5010" .pid)" "$p1"
	expect_eq "socket 5011 pid" "$(socket_field "$V4B:5011" .pid)" "$p2"
	expect_eq "rows" "$(final '.sockets | length')" 2
}

test_shared_socket() {
	setup_hosts || return
	start_recv "$B" "$V4B:5012" --rcvbuf 4096 --share || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5012" -c 100 -s 1000)
	settle
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq "socket drops" "$(socket_field "$V4B:5012" .drops)" "$((sent - got))"
	expect_eq "processes sharing it" "$(socket_field "$V4B:5012" .nprocs)" 2
	expect_eq "first owner is a holder" \
		"$(final --arg p "$rpid" "[.sockets[0].pids[] | tostring] | index(\$p) != null")" true
}

# --port, --pid and --netns keep what they should and nothing else.
test_filters() {
	setup_hosts || return
	start_recv "$B" "$V4B:5020" --rcvbuf 4096 || return
	local p1=$RECV_PID o1=$RECV_OUT
	start_recv "$B" "$V4B:5021" --rcvbuf 4096 || return
	local p2=$RECV_PID o2=$RECV_OUT

	start_top --port 5020 -N "$B" || return
	local s1=$(send "$A" "$V4B:5020" -c 80 -s 1000)
	local s2=$(send "$A" "$V4B:5021" -c 80 -s 1000)
	send "$A" "[$V6B]:5020" -c 10 >/dev/null # no IPv6 socket on 5020: kept
	settle
	stop_top || return
	# ground truth: what each receiver read (neither read before)
	local g1=$(stop_recv "$p1" "$o1") g2=$(stop_recv "$p2" "$o2")
	cp "$T/final.json" "$T/port.json"
	expect_eq "--port: only 5020" "$(final '[.sockets[].local] | join(",")')" "$V4B:5020"
	expect_gt "--port: 5020 dropped" "$((s1 - g1))" 0
	expect_eq "--port: 5020 drops" "$(socket_field "$V4B:5020" .drops)" "$((s1 - g1))"
	expect_eq "--port: no_socket to 5020 kept" "$(final '[.unattributed[] | select(.cause == "no_socket")][0].drops')" 10
	expect_eq "--port: totals.drops" "$(final .totals.drops)" "$((s1 - g1 + 10))"
	expect_gt "--port: others filtered in the kernel" "$(final .totals.filtered)" 0
	# the netns counters still count 5021's drops: shown, and not comparable
	expect_eq "--port: reconcile rcvbuf (kernel: both sockets)" \
		"$(final '[.reconcile[] | select(.cause == "rcvbuf")][0] | "\(.kernel) \(.udpdrop)"')" \
		"$((s1 - g1 + s2 - g2)) $((s1 - g1))"
	expect_eq "--port: caveat" "$(final '.reconcile_caveat | startswith("not comparable")')" true

	# --pid: fresh receivers; another process's socket and a port with no
	# socket drop too, and neither shows
	start_recv "$B" "$V4B:5020" --rcvbuf 4096 || return
	p1=$RECV_PID o1=$RECV_OUT
	start_recv "$B" "$V4B:5021" --rcvbuf 4096 || return
	p2=$RECV_PID o2=$RECV_OUT
	start_top -p "$p2" || return
	send "$A" "$V4B:5020" -c 50 -s 1000 >/dev/null
	local s3=$(send "$A" "$V4B:5021" -c 50 -s 1000)
	send "$A" "$V4B:5022" -c 5 >/dev/null
	settle
	stop_top || return
	local g2=$(stop_recv "$p2" "$o2")
	expect_eq "--pid: only its socket" "$(final '[.sockets[].local] | join(",")')" "$V4B:5021"
	expect_eq "--pid: its pid" "$(final '.sockets[0].pid')" "$p2"
	expect_gt "--pid: 5021 dropped" "$((s3 - g2))" 0
	expect_eq "--pid: 5021 drops" "$(socket_field "$V4B:5021" .drops)" "$((s3 - g2))"
	expect_eq "--pid: unattributed" "$(final '.unattributed | length')" 0
	expect_eq "--pid: totals.drops" "$(final .totals.drops)" "$((s3 - g2))"

	start_top -N "$A" || return
	send "$A" "$V4B:5020" -c 50 -s 1000 >/dev/null # drops in B
	send "$B" "$V4A:5999" -c 7 >/dev/null          # no_socket in A
	settle
	stop_top || return
	expect_eq "--netns A: no socket of B" "$(final '.sockets | length')" 0
	expect_eq "--netns A: its no_socket" "$(final '[.unattributed[].drops] | add')" 7
	stop_recv "$p1" "$o1" >/dev/null
}

# The miss the reconciliation exists to show: without --netns, a netns
# whose UdpRcvbufErrors rose while udpdrop counted nothing there (its
# drops filtered out in the kernel by --port) still has its counters.
test_counters_quiet_netns() {
	setup_hosts || return
	start_recv "$B" "$V4B:5023" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_top --port 5977 || return
	local sent=$(send "$A" "$V4B:5023" -c 80 -s 1000)
	settle
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout") nb=$(ns_inode "$B")
	expect_gt "dropped" "$((sent - got))" 0
	expect_eq "no rows in B" "$(final "[.sockets[], .unattributed[] | select(.netns == $nb)] | length")" 0
	expect_eq "counters of B" "$(final ".counters[\"$nb\"].UdpRcvbufErrors")" "$((sent - got))"
	expect_eq "reconcile rcvbuf in B" \
		"$(final "[.reconcile[] | select(.netns == $nb and .cause == \"rcvbuf\")][0] | \"\\(.kernel) \\(.udpdrop)\"")" \
		"$((sent - got)) 0"
}

test_bad_input() {
	local out rc
	for args in "--interval -1" "--interval 0" "--port 70000" "--port 0" "--count x" \
		"--netns no-such-netns" "--bogus" "--pid 999999999" "extra"; do
		out=$("$UDPDROP" top $args 2>&1 >/dev/null)
		rc=$?
		expect_eq "top $args: exit" "$rc" 2
		[[ -n $out && $(wc -l <<<"$out") -le 2 ]] || fail "top $args: unclear error '$out'"
	done
	"$UDPDROP" nosuchcmd >/dev/null 2>&1
	expect_eq "unknown command: exit" "$?" 2
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$UDPDROP" top -b -n 1 2>&1)
	rc=$?
	expect_eq "not root: exit" "$rc" 3
	[[ $out == *"CAP_BPF"* && $out == *"root"* ]] || fail "not root: message '$out'"
	# a bad value is a bad value for anyone; an inode only root can see is not
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$UDPDROP" top -N no-such-netns >/dev/null 2>&1
	expect_eq "not root, unknown netns name: exit" "$?" 2
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$UDPDROP" top --port 70000 >/dev/null 2>&1
	expect_eq "not root, bad port: exit" "$?" 2
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$UDPDROP" top -p 1 >/dev/null 2>&1
	expect_eq "not root, another user's pid: exit" "$?" 3
}

# A missing kernel feature: exit 4 and a line that names it. Each case
# hides the feature in a private mount namespace, so the host is untouched.
test_missing_kernel_features() {
	local out rc
	out=$(unshare -m sh -c 'mount --bind /dev/null /sys/kernel/btf/vmlinux &&
		exec "$0" top -b -n 1 -i 0.2' "$UDPDROP" 2>&1 >/dev/null)
	rc=$?
	expect_eq "no usable BTF: exit" "$rc" 4
	[[ $out == *BTF* ]] || fail "no usable BTF: message does not name BTF: '$out'"
	out=$(unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null;
		mount -t tmpfs none /sys/kernel/tracing &&
		exec "$0" top -b -n 1 -i 0.2 --attach tracepoint' "$UDPDROP" 2>&1 >/dev/null)
	rc=$?
	expect_eq "no tracefs, --attach tracepoint: exit" "$rc" 4
	[[ $out == *tracefs* ]] || fail "no tracefs: message does not name tracefs: '$out'"
}

# make install honours DESTDIR and PREFIX and installs a working binary.
test_install() {
	local d
	d=$(mktemp -d)
	make --no-print-directory install DESTDIR="$d" PREFIX=/opt/ud >/dev/null ||
		{ fail "make install"; rm -rf "$d"; return; }
	[[ -x $d/opt/ud/sbin/udpdrop ]] || fail "binary not installed"
	[[ -f $d/opt/ud/share/man/man8/udpdrop.8 ]] || fail "man page not installed"
	# a page per command, each with the OPTIONS of the command's table
	local cmd
	for cmd in $("$UDPDROP" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
		[[ -f $d/opt/ud/share/man/man8/udpdrop-$cmd.8 ]] || fail "udpdrop-$cmd.8 not installed"
	done
	expect_eq "installed binary runs" "$("$d/opt/ud/sbin/udpdrop" -V)" "udpdrop $(sed -n 's/^VERSION *:= *//p' Makefile)"
	make --no-print-directory uninstall DESTDIR="$d" PREFIX=/opt/ud >/dev/null
	expect_eq "after uninstall: files left" "$(find "$d" -type f | wc -l)" 0
	rm -rf "$d"
}

# The ids of the programs a `udpdrop top -v` run reports (its stderr file).
prog_ids_of() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'tracing UDP drops' "$1" && break
		sleep 0.1
	done
	sed -n 's/.*program id \([0-9]*\) .*/\1/p' "$1"
}

# Are any of these program ids still loaded? Freed after an RCU grace
# period once the last fd closes: poll a little before calling it a leak.
ids_left() {
	local i id left
	for ((i = 0; i < 40; i++)); do
		left=
		for id in "$@"; do
			bpftool prog show id "$id" >/dev/null 2>&1 && left+="$id "
		done
		[[ -z $left ]] && break
		sleep 0.1
	done
	echo "${left:-none}"
}

# The ids of the bpf_links (bpftool link show) of these program ids.
links_of() {
	bpftool link show -j 2>/dev/null |
		jq -r --arg ids "$*" '($ids | split(" ") | map(select(. != "") | tonumber)) as $p
			| .[] | select(.prog_id as $x | any($p[]; . == $x)) | .id' | tr '\n' ' '
}

# Are any links of these program ids still there? Polled as ids_left is.
links_left() {
	local i left
	for ((i = 0; i < 40; i++)); do
		left=$(links_of "$@")
		[[ -z ${left// /} ]] && break
		sleep 0.1
	done
	left=${left% }
	echo "${left:-none}"
}

# SIGTERM prints the summary and exits 0; SIGKILL leaves nothing attached.
test_signals() {
	setup_hosts || return
	local out=$T/sig.out err=$T/sig.err ids
	"$UDPDROP" top -b -i 5 -v >"$out" 2>"$err" &
	local pid=$!
	ids=$(prog_ids_of "$err")
	[[ -n $ids ]] || { fail "no program ids reported: $(cat "$err")"; return; }
	for id in $ids; do
		bpftool prog show id "$id" >/dev/null 2>&1 || fail "program $id not loaded while running"
	done
	kill -TERM "$pid"
	wait "$pid"
	expect_eq "SIGTERM exit" "$?" 0
	grep -q '=== summary' "$out" || fail "SIGTERM: no summary printed"
	expect_eq "after SIGTERM: programs left" "$(ids_left $ids)" none

	# SIGKILL: the kernel drops programs and links with the last fd; once
	# as is, once with --no-rx-sk (kfree_skb + udp_fail_queue_rcv_skb)
	local args n n_default=0 links
	for args in "" "--no-rx-sk"; do
		err=$T/sig-kill${args:+-norx}.err # its own file: no old ids in it
		"$UDPDROP" top -b -i 5 -v $args >/dev/null 2>"$err" &
		pid=$!
		ids=$(prog_ids_of "$err")
		[[ -n $ids ]] || { fail "no program ids reported ($args): $(cat "$err")"; return; }
		n=$(wc -w <<<"$ids")
		# --no-rx-sk adds the udp_fail_queue_rcv_skb program to the
		# default set (kfree_skb, sk_data_ready, kmem_cache_free)
		[[ -z $args ]] && n_default=$n
		[[ -n $args ]] && expect_eq "$args: programs attached" "$n" $((n_default + 1))
		links=$(links_of $ids)
		expect_eq "${args:-default}: links while running (one per program)" "$(wc -w <<<"$links")" "$n"
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		expect_eq "${args:-default}: after SIGKILL: programs left" "$(ids_left $ids)" none
		expect_eq "${args:-default}: after SIGKILL: links left" "$(links_left $ids)" none
	done
}

# Datagrams still queued when their socket closes: socket_close, on that
# socket, in its netns (the kernel frees them with no reason and no netns).
test_socket_close() {
	setup_hosts || return
	start_recv "$B" "$V4B:5030" --rcvbuf 1000000 || return
	local rpid=$RECV_PID
	start_top -N "$B" -v || return
	local sent=$(send "$A" "$V4B:5030" -c 25 -s 200)
	settle
	local queued=$(ip netns exec "$B" ss -uanH "sport = :5030" | awk '{ print $2 }')
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	settle 1 # the queue is purged from an RCU callback
	stop_top || return
	expect_eq sent "$sent" 25
	expect_gt "queued bytes before the kill" "$queued" 0
	expect_eq "socket_close drops" "$(socket_field "$V4B:5030" .causes.socket_close)" 25
	expect_eq "the socket has gone" "$(socket_field "$V4B:5030" .alive)" false
	# one socket on its port: the slab-free program is never attached
	expect_eq "kmem:kmem_cache_free left alone" "$(grep -c "a local port is shared" "$T/top.err")" 0
	expect_eq "netns" "$(socket_field "$V4B:5030" .netns)" "$(ns_inode "$B")"
}

# top -p ends when its process exits (as record -p does): after the
# socket_close drops of the queue the process left, with "pid_gone".
test_top_pid_exits() {
	setup_hosts || return
	start_recv "$B" "$V4B:5031" --rcvbuf 1000000 || return
	local rpid=$RECV_PID rc
	start_top -p "$rpid" || return
	local sent=$(send "$A" "$V4B:5031" -c 25 -s 200)
	settle
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	ended "$TOP_PID" || { fail "top -p still runs 15 s after its process exited"; kill -INT "$TOP_PID"; }
	wait "$TOP_PID"
	rc=$?
	TOP_PID=
	expect_eq "top exit code" "$rc" 0
	expect_eq "the line" "$(grep -c "udpdrop: process $rpid exited: stopping" "$T/top.err")" 1
	tail -n 1 "$TOP_OUT" >"$T/final.json"
	expect_eq "stopped" "$(final .stopped)" pid_gone
	expect_eq sent "$sent" 25
	expect_eq "socket_close drops, counted before the end" \
		"$(socket_field "$V4B:5031" .causes.socket_close)" 25
}

# The same, with a live socket on the same port in a third netns: the
# purged queue is B's, not C's (it has no netns of its own in the kernel).
test_socket_close_other_netns() {
	setup_hosts || return
	local C=udt-$$-c
	ip netns add "$C" && ip -n "$C" link set lo up || { fail "netns C"; return; }
	EXTRA_NETNS+=("$C")
	start_recv "$C" "0.0.0.0:5040" --read || return
	local cpid=$RECV_PID
	start_recv "$B" "$V4B:5040" --rcvbuf 1000000 || return
	local rpid=$RECV_PID
	start_top || return
	send "$A" "$V4B:5040" -c 25 -s 200 >/dev/null
	settle
	# both close in the same interval: only the address tells them apart
	{ kill -KILL "$rpid" "$cpid"; wait "$rpid" "$cpid"; } 2>/dev/null
	settle 1
	stop_top || return
	expect_eq "socket_close on B's socket" \
		"$(final --arg n "$(ns_inode "$B")" '[.sockets[] | select(.netns == ($n | tonumber))][0].causes.socket_close')" 25
	expect_eq "nothing on C's socket" \
		"$(final --arg n "$(ns_inode "$C")" '[.sockets[] | select(.netns == ($n | tonumber))] | length')" 0
}

# A service restarts on the same port: each socket keeps the drops of its
# own lifetime (nft drops them before any socket is looked up).
test_restart_same_port() {
	setup_hosts || return
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table inet udt {
		chain in {
			type filter hook input priority 0;
			udp dport 5031 counter drop
		}
	}
	EOF
	start_recv "$B" "$V4B:5031" --read || return
	local p1=$RECV_PID o1=$RECV_OUT
	start_top -N "$B" -i 0.3 || return
	send "$A" "$V4B:5031" -c 20 >/dev/null
	sleep 1 # an interval or more: the drops are seen while p1 is alive
	stop_recv "$p1" "$o1" >/dev/null
	sleep 0.3
	start_recv "$B" "$V4B:5031" --read || return
	local p2=$RECV_PID o2=$RECV_OUT
	sleep 0.8 # the new socket is seen before its drops
	send "$A" "$V4B:5031" -c 30 >/dev/null
	settle 1
	stop_top || return
	expect_eq "first socket's drops" \
		"$(final '[.sockets[] | select(.alive == false)][0].drops')" 20
	expect_eq "second socket's drops" \
		"$(final '[.sockets[] | select(.alive == true)][0].drops')" 30
	expect_eq "second socket's owner" \
		"$(final '[.sockets[] | select(.alive == true)][0].pid')" "$p2"
	stop_recv "$p2" "$o2" >/dev/null
}

# The full-screen view in a real terminal (tmux): a known drop pattern,
# then what a person would do: read the rows, sort, filter, search, open
# the detail, shrink the terminal to 80x24, quit. The terminal must come
# back whole and nothing may stay attached. Then the same exit by SIGTERM.
test_tui() {
	setup_hosts || return
	start_recv "$B" "$V4B:5001" --rcvbuf 4096 || return
	start_recv "$B" "$V4B:5002" --rcvbuf 4096 || return
	start_recv "$B" "$V4B:5003" --rcvbuf 4096 --reuseport 3 || return
	tui_start 120 32 -N "$B" -i 0.5 -v || return
	tui_keys a # quiet sockets too: every member of the 5003 group is a row
	local ids
	ids=$(sed -n 's/.*program id \([0-9]*\) .*/\1/p' "$T/tui.err")
	[[ -n $ids ]] || { fail "no program ids reported: $(cat "$T/tui.err")"; return; }
	send "$A" "$V4B:5001" -c 300 -s 1000 >/dev/null
	send "$A" "$V4B:5002" -c 100 -s 1000 >/dev/null
	send "$A" "$V4B:5999" -c 10 >/dev/null
	local sp
	for sp in 40001 40002 40003 40004 40005 40006; do # spread over the group
		send "$A" "$V4B:5003" -c 50 -s 1000 --sport $sp >/dev/null
	done
	settle 1.5
	local d1 d2 d3
	d1=$(ss_drops "$B" 5001) d2=$(ss_drops "$B" 5002)
	d3=$(ip netns exec "$B" ss -uamnH "sport = :5003" | grep -o ',d[0-9]*' | tr -d ',d' |
		awk '{ s += $1 } END { print s + 0 }')
	expect_gt "ss d 5003 (3 sockets)" "$d3" 0
	expect_gt "ss d 5001" "$d1" 0
	expect_gt "ss d 5002" "$d2" 0
	# rows: each socket with its exact total and cause; the flow below
	tui_wait "$V4B:5001 .* $(commas "$d1") rcvbuf" ||
		fail "no row for 5001 with $d1 drops: $(tui_screen)"
	tui_wait "$V4B:5002 .* $(commas "$d2") rcvbuf" ||
		fail "no row for 5002 with $d2 drops: $(tui_screen)"
	tui_wait "$V4B:5999 .* 10 no_socket" || fail "no socketless row for 5999: $(tui_screen)"
	# SO_REUSEPORT: one row for the three sockets on 5003, their sum
	tui_wait "$V4B:5003 .* $(commas "$d3") rcvbuf .*3 sockets share the port" ||
		fail "no group row for 5003 with $d3 drops: $(tui_screen)"
	tui_wait "View: 3 of 3 sockets" || fail "rows: $(tui_line View:)"
	local all=$((d1 + d2 + d3))
	tui_wait "UdpRcvbufErrors \\+$(commas $all) / attributed $(commas $all) = 100%" ||
		fail "no reconciliation line: $(tui_line Kernel:)"
	# default order: busiest first (rates are 0 now, so most drops first)
	(($(tui_lineno ":5001 ") < $(tui_lineno ":5002 "))) || fail "5001 not above 5002: $(tui_screen)"

	# sort by LOCAL through the menu, then reverse it
	tui_keys s
	tui_wait "Sort by" || fail "no sort menu"
	tui_keys Up Up Up Up Up Enter
	tui_wait "sort LOCAL \\(low first\\)" || fail "sort not LOCAL: $(tui_line View:)"
	tui_keys r
	tui_wait "sort LOCAL \\(high first\\)" || fail "sort not reversed: $(tui_line View:)"
	(($(tui_lineno ":5002 ") < $(tui_lineno ":5001 "))) || fail "reversed: 5002 not above 5001"

	# filter by port, then clear it
	tui_keys '\'
	tui_keys -l "port:5002"
	tui_keys Enter
	tui_wait "View: 1 of 3 sockets" || fail "filter: $(tui_line View:)"
	expect_eq "filtered out: 5001 row" "$(tui_lineno "$V4B:5001 ")" 0
	tui_keys '\' C-u Enter
	tui_wait "View: 3 of 3 sockets" || fail "filter not cleared: $(tui_line View:)"
	# H: one row per socket, the group's members apart; H again: grouped
	tui_keys H
	tui_wait "View: 5 of 5 sockets" || fail "H: $(tui_line View:)"
	expect_eq "H: rows on 5003" "$(tui_screen | grep -c "$V4B:5003 ")" 3
	tui_keys H
	tui_wait "View: 3 of 3 sockets" || fail "H again: $(tui_line View:)"
	# the group's detail lists its members
	tui_keys /
	tui_keys -l "5003"
	tui_keys Enter Enter
	tui_wait "3 sockets bound to it" || fail "no group detail: $(tui_screen)"
	expect_eq "group detail: member lines" "$(tui_screen | grep -cE '^ +[0-9]+ +[0-9]+/udptest ')" 3
	tui_keys Escape

	# search puts the cursor on 5001; Enter shows its detail
	tui_keys /
	tui_keys -l "5001"
	tui_keys Enter Enter
	tui_wait "detail" || fail "no detail view: $(tui_screen)"
	tui_wait "SOCKET_RCVBUFF +$(commas "$d1") datagrams" || fail "detail: $(tui_screen)"
	tui_wait "socket +$V4B:5001" || fail "detail of another socket: $(tui_screen)"
	tui_wait "why +rcvbuf: " || fail "detail has no why: $(tui_screen)"
	tui_wait "own drop counter \\(ss -uam d\\): $d1" || fail "detail: no sk_drops"
	# the advice engine's finding for rcvbuf, below: what, evidence, change, verify
	tui_keys End
	tui_wait "advice +rcvbuf: the socket's receive buffer was full|advice +rcvbuf: .*sender is faster" ||
		fail "detail: no rcvbuf advice: $(tui_screen)"
	tui_wait "evidence +$(commas "$d1") datagrams of ~" || fail "detail: no evidence: $(tui_screen)"
	tui_wait "change +(First make|Have the|Run sysctl|Run on the host|Pace|A bigger|Raise)" || fail "detail: no change: $(tui_screen)"
	tui_wait "SO_RCVBUF, [0-9]+\\): the kernel doubles it|net.core.rmem_default=[0-9]+" ||
		fail "detail: no buffer size computed: $(tui_screen)"
	tui_wait "verify +Under the same load the socket drops nothing" || fail "detail: no verify: $(tui_screen)"
	tui_keys Home
	tui_wait "own drop counter \\(ss -uam d\\): $d1" || fail "detail: no sk_drops"
	tui_keys Escape
	tui_wait "View: 3 of 3" || fail "Esc did not go back"

	# 80x24: still the rows, nothing wider than the terminal
	tmux -L "$TMUX_SOCK" resize-window -t tui -x 80 -y 24
	tui_wait "$V4B:5001 .* $(commas "$d1") rcvbuf" || fail "80x24: no 5001 row: $(tui_screen)"
	# wc -L: display cells (mawk's length() counts bytes of "▼")
	expect_eq "80x24: widest line fits" "$(tui_screen | LC_ALL=C.UTF-8 wc -L | awk '{ print ($1 <= 80) }')" 1
	expect_eq "80x24: lines" "$(tui_screen | wc -l)" 24

	# help, and back
	tui_keys h
	tui_wait "Filter terms" || fail "no help screen"
	tui_keys x
	tui_wait "View:" || fail "help did not close"

	# quit: exit 0, the terminal restored, the summary left behind
	tui_keys q
	expect_eq "q: exit code" "$(tui_exit)" 0
	expect_eq "q: alternate screen left" "$(tui_flag alternate_on)" 0
	expect_eq "q: cursor visible" "$(tui_flag cursor_flag)" 1
	tmux -L "$TMUX_SOCK" capture-pane -p -S -200 -t tui | grep -q "=== summary" ||
		fail "no summary after quitting: $(tui_screen)"
	expect_eq "q: programs left" "$(ids_left $ids)" none
	tmux -L "$TMUX_SOCK" kill-server

	# SIGTERM: the same clean exit
	tui_start 100 30 -N "$B" -v || return
	ids=$(sed -n 's/.*program id \([0-9]*\) .*/\1/p' "$T/tui.err")
	local pid
	pid=$(pgrep -P "$(cat "$T/tui.pid")" udpdrop)
	[[ -n $pid ]] || { fail "no udpdrop process under tmux"; return; }
	kill -TERM "$pid"
	expect_eq "SIGTERM: exit code" "$(tui_exit)" 0
	expect_eq "SIGTERM: alternate screen left" "$(tui_flag alternate_on)" 0
	expect_eq "SIGTERM: programs left" "$(ids_left $ids)" none
}
