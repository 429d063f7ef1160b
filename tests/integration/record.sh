# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of `udpdrop record`: a trace written while real drops
# happen, read back with tracecat (tests/integration/tracecat.c) and
# checked against ground truth. Sourced by run.sh.

TRACECAT=${TRACECAT:-$ROOT/.output/tests/tracecat}

# tc_records FILE: the trace as JSON lines in $T/trace.json.
tc_records() {
	"$TRACECAT" "$1" >"$T/trace.json" || fail "tracecat $1: $(tail -n 1 "$T/trace.json")"
}
tq() { jq -rs "$@" "$T/trace.json"; }

# rcvbuf: a receiver that never reads, a tiny buffer; record -N B, stopped by SIGINT once the datagrams are in.
test_record_rcvbuf() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	start_recv "$B" "$V4B:5031" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT ns
	ns=$(ns_inode "$B")
	local before=$(mib "$B" Udp RcvbufErrors)
	# stopped by SIGINT once the datagrams are in, not by a -d that
	# starts before the load (an emulated CPU takes seconds to load)
	"$UDPDROP" record -N "$B" -o "$T/t.data" -d 600 -i 0.5 --headers 64 2>"$T/rec.err" &
	local rec=$! i rc
	BG_PIDS+=("$rec")
	for ((i = 0; i < 600; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'recording UDP drops' "$T/rec.err" ||
		{ fail "udpdrop record did not start: $(cat "$T/rec.err")"; return; }
	local sent=$(send "$A" "$V4B:5031" -c 300 -s 1000)
	settle
	kill -INT "$rec"
	wait "$rec"
	rc=$?
	expect_eq "record exit code" "$rc" 0
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_gt dropped "$dropped" 0
	expect_eq "UdpRcvbufErrors delta (live)" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	grep -qE "^udpdrop record: $(commas "$dropped") drops, $(commas "$dropped") events \(0 shed\) in [0-9.]+ s written to $T/t.data \([0-9.]+ [KM]?i?B\)$" "$T/rec.err" ||
		fail "summary line: $(cat "$T/rec.err")"
	expect_eq "file mode" "$(stat -c %a "$T/t.data")" 600

	tc_records "$T/t.data"
	expect_eq "status" "$(tq '.[-1].status')" complete
	expect_eq "END present" "$(tq '[.[] | select(.type == "END")] | length')" 1
	expect_eq "META first" "$(tq '.[0].type')" META
	local k
	for k in host kernel boot_time start_time cmdline udpdrop_version causes \
		net.core.rmem_default net.core.rmem_max net.core.wmem_default \
		net.core.wmem_max net.ipv4.udp_mem net.core.netdev_max_backlog \
		net.ipv4.ipfrag_time net.ipv4.ipfrag_high_thresh net.ipv4.ipfrag_low_thresh; do
		expect_eq "META has $k" "$(tq --arg k "$k" '.[0].meta | has($k)')" true
	done
	expect_eq "META causes start" "$(tq '.[0].meta.causes | split(",")[0:3] | join(",")')" rcvbuf,udp_mem,no_socket
	expect_eq "META kernel" "$(tq '.[0].meta.kernel')" "$(uname -r)"
	expect_eq "META ipfrag_time (the netns's)" "$(tq '.[0].meta["net.ipv4.ipfrag_time"]')" \
		"$(ip netns exec "$B" cat /proc/sys/net/ipv4/ipfrag_time)"
	local rr=$(rcvbuf_reason)
	expect_eq "REASONS has $rr" \
		"$(tq --arg r "$rr" '[.[] | select(.type == "REASONS") | .reasons | has($r)] | any')" true
	expect_eq "IFACES of B has veth0" \
		"$(tq --argjson ns "$ns" '[.[] | select(.type == "IFACES") | .ifaces[] | select(.name == "veth0" and .netns == $ns)] | length')" 1

	# the receiver socket, as the last SOCKETS saw it
	local cookie=$(tq '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.lport == 5031) | .cookie')
	expect_gt "receiver cookie" "${cookie:-x}" 0
	# what each drop's EVENT names: the socket (before 6.10 the event
	# waits with its drop for udp_fail_queue_rcv_skb), or where only the
	# flow is known, cookie 0. The COUNTS are the socket's either way:
	# record writes a flow's share as the socket the live model matched
	# it to, as top shows it.
	local evc=$cookie evsock=cookie:$cookie
	[[ $(queue_drop_via) == flow ]] && evc=0 evsock=none
	expect_eq "receiver comm" "$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.cookie == $c) | .comm')" udptest
	expect_eq "receiver pid" "$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.cookie == $c) | .pid')" "$rpid"
	expect_eq "last COUNTS for the socket = sent - read" \
		"$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.cookie == $c) | .datagrams) | add // 0')" "$dropped"
	local rv=$(tq --arg r "$rr" '[.[] | select(.type == "REASONS")][-1].reasons[$r]')
	expect_eq "last COUNTS with reason $rr = sent - read" \
		"$(tq --argjson r "$rv" '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.reason == $r) | .datagrams) | add // 0')" "$dropped"
	expect_eq "first COUNTS empty" "$(tq '[.[] | select(.type == "COUNTS")][0].counts | length')" 0
	expect_eq "MIB UdpRcvbufErrors last - first" \
		"$(tq --argjson ns "$ns" '[.[] | select(.type == "MIB" and .netns == $ns)] | .[-1].counters.UdpRcvbufErrors - .[0].counters.UdpRcvbufErrors')" "$dropped"
	expect_eq "MIB only for B" "$(tq --argjson ns "$ns" '[.[] | select(.type == "MIB" and .netns != $ns)] | length')" 0
	# one EVENT per drop, each naming the socket, the flow and the cause,
	# with the packet's first 64 bytes from its IPv4 header
	expect_eq "EVENTs" "$(tq '[.[] | select(.type == "EVENT")] | length')" "$dropped"
	expect_eq "EVENT datagrams" "$(tq '[.[] | select(.type == "EVENT") | .datagrams] | add // 0')" "$dropped"
	expect_eq "EVENTs of other sockets" \
		"$(tq --argjson c "${evc:-0}" '[.[] | select(.type == "EVENT" and .cookie != $c)] | length')" 0
	expect_eq "EVENT causes" "$(tq '[.[] | select(.type == "EVENT") | .cause] | unique | map(tostring) | join(",")')" 0
	expect_eq "EVENT reasons" "$(tq --argjson r "$rv" '[.[] | select(.type == "EVENT") | .reason == $r] | all')" true
	# len is skb->len where it was freed: the payload, the UDP header pulled
	expect_eq "EVENT flow" "$(tq '[.[] | select(.type == "EVENT") | "\(.saddr)>\(.daddr):\(.dport) \(.len) \(.netns)"] | unique | join(";")')" \
		"$V4A>$V4B:5031 1000 $ns"
	expect_eq "EVENT capture" "$(tq '[.[] | select(.type == "EVENT") | "\(.caplen) \(.cap[0:2]) \(.cap[18:20])"] | unique | join(";")')" "64 45 11"
	expect_eq "EVENT times within the capture" \
		"$(tq '([.[] | select(.type == "COUNTS") | .time_ns] | [min, max]) as $w | [.[] | select(.type == "EVENT") | .time_ns >= $w[0] and .time_ns <= $w[1]] | all')" true
	expect_eq "META events" "$(tq '.[0].meta.events')" recorded
	expect_eq "META headers" "$(tq '.[0].meta.headers')" 64
	expect_eq "END events" "$(tq '[.[] | select(.type == "END")][0].events')" "$dropped"
	expect_eq "no SHED" "$(tq '[.[] | select(.type == "SHED")] | length')" 0

	# the captured headers as pcapng, read back by tshark and tcpdump
	"$UDPDROP" report "$T/t.data" --pcap "$T/t.pcapng" 2>"$T/pcap.err"
	expect_eq "report --pcap exit" "$?" 0
	grep -q "^udpdrop report: $(commas "$dropped") packets written to $T/t.pcapng" "$T/pcap.err" ||
		fail "report --pcap summary: $(cat "$T/pcap.err")"
	local field=frame.comment
	tshark -G fields 2>/dev/null | grep -q $'\tframe.comment\t' || field=pkt_comment
	tshark -r "$T/t.pcapng" -T fields -e ip.src -e ip.dst -e udp.dstport -e "$field" \
		>"$T/tshark.out" 2>"$T/tshark.err"
	expect_eq "tshark exit" "$?" 0
	expect_eq "tshark packets" "$(wc -l <"$T/tshark.out")" "$dropped"
	expect_eq "tshark: flow, cause, reason, socket" \
		"$(sed -E 's/ cpu=[0-9]+ location=[^ ]+$//' "$T/tshark.out" | sort -u)" \
		"$(printf '%s\t%s\t5031\tcause=rcvbuf reason=%s socket=%s netns=%s' "$V4A" "$V4B" "$(rcvbuf_reason)" "$evsock" "$ns")"
	expect_eq "tcpdump packets" "$(tcpdump -nn -r "$T/t.pcapng" 2>/dev/null | grep -c "$V4B.5031: UDP, length 1000")" "$dropped"
	expect_eq "SYMBOLS name the locations" \
		"$(tq '([.[] | select(.type == "SYMBOLS") | .symbols | keys[]] | unique) as $s |
			[.[] | select(.type == "COUNTS") | .counts[] | .location] | unique | all(. as $l | $s | any(. == $l))')" true
}

# record_flows_case 4|6 PORT NOPORT SPORT HEADERS CAP_JQ CAP_WANT [SEND_ARGS...]:
# each EVENT's flow is read from the packet's headers in the programs (in
# place with bpf_rdonly_cast, or copied: run again with
# UDPDROP_COMPAT_OBJECT=1), so both of a packet's addresses and ports must
# come back: rcvbuf drops of a socket on B's PORT (sent from SPORT) and
# no-socket drops to NOPORT (from SPORT + 1), which the kernel's NoPorts
# counts. CAP_JQ: what of each EVENT's capture (--headers HEADERS) to
# compare with CAP_WANT.
record_flows_case() {
	local v=$1 port=$2 noport=$3 sport=$4 headers=$5 cap_jq=$6 cap_want=$7
	shift 7
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	local src=$V4A dst=$V4B ep=$V4B fam=2 udp=Udp
	[[ $v == 6 ]] && src=$V6A dst=$V6B ep="[$V6B]" fam=10 udp=Udp6
	start_recv "$B" "$ep:$port" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT ns
	ns=$(ns_inode "$B")
	local noports=$(mib "$B" "$udp" NoPorts)
	start_record "$T/t.data" -N "$B" -i 0.5 --headers "$headers" || return
	local sent=$(send "$A" "$ep:$port" -c 300 -s 1000 --sport "$sport" "$@")
	local nosock=$(send "$A" "$ep:$noport" -c 20 --sport $((sport + 1)) "$@")
	settle
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_eq "sent (no socket)" "$nosock" 20
	expect_eq "${udp}NoPorts delta" "$(($(mib "$B" "$udp" NoPorts) - noports))" 20
	expect_gt dropped "$dropped" 0
	tc_records "$T/t.data"
	expect_eq "EVENT flows (rcvbuf; no socket)" \
		"$(tq '[.[] | select(.type == "EVENT") | "\(.family) \(.saddr).\(.sport)>\(.daddr).\(.dport) \(.netns)"] | group_by(.) | map("\(.[0]) x\(length)") | join(";")')" \
		"$(printf '%s %s.%s>%s.%s %s x%s;%s %s.%s>%s.%s %s x20' \
			"$fam" "$src" "$sport" "$dst" "$port" "$ns" "$dropped" \
			"$fam" "$src" $((sport + 1)) "$dst" "$noport" "$ns" |
			tr ";" "\n" | LC_ALL=C sort | paste -sd";")"
	expect_eq "EVENT capture" "$(tq "[.[] | select(.type == \"EVENT\") | $cap_jq] | unique | join(\";\")")" "$cap_want"
}

# IPv6; the capture starts at the IPv6 header: version 6, next header UDP
test_record_ipv6() {
	record_flows_case 6 5042 5999 4242 48 '"\(.caplen) \(.cap[0:1]) \(.cap[12:14])"' "48 6 11"
}

# IPv4 with options (8 bytes of NOPs: IHL 7): the ports are read past
# them; the capture starts at the IPv4 header: version 4, IHL 7, UDP
test_record_ipv4_options() {
	record_flows_case 4 5044 5998 4245 64 '"\(.caplen) \(.cap[0:2]) \(.cap[18:20])"' "64 47 11" \
		--ip-options
}

# IPv6 fragments that time out in reassembly: each EVENT's flow comes from
# the fragment header (the first fragment's ports follow it; a later
# fragment has none). B's nft drops every datagram's last fragment before
# reassembly; ip6frag_time is 1 s.
test_record_ipv6_fragments() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	TIMER_DROPS=1
	ip netns exec "$B" sysctl -qw net.ipv6.ip6frag_time=1 || { fail "ip6frag_time"; return; }
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table ip6 udt6 {
		chain pre {
			type filter hook prerouting priority -450;
			frag frag-off != 0 frag more-fragments 0 counter drop
		}
	}
	EOF
	start_recv "$B" "[$V6B]:5043" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT ns
	ns=$(ns_inode "$B")
	local tmo=$(mib "$B" Ip6 ReasmTimeout)
	start_record "$T/t.data" -N "$B" -i 0.5 || return
	local sent=$(send "$A" "[$V6B]:5043" -c 5 -s 3000 --sport 4244)
	settle 3 # ip6frag_time plus the timer's slack
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	expect_eq "read by the app" "$(stop_recv "$rpid" "$rout")" 0
	expect_eq sent "$sent" 5
	expect_eq "Ip6ReasmTimeout delta" "$(($(mib "$B" Ip6 ReasmTimeout) - tmo))" 5
	tc_records "$T/t.data"
	# 3000 bytes over a 1500-byte MTU: a first, a middle and a last
	# fragment; the first and middle time out, nft drops the last
	expect_eq "EVENT flows (later fragments; first ones)" \
		"$(tq '[.[] | select(.type == "EVENT") | "\(.family) \(.saddr).\(.sport)>\(.daddr).\(.dport) \(.netns)"] | group_by(.) | map("\(.[0]) x\(length)") | join(";")')" \
		"$(printf '10 %s.0>%s.0 %s x10;10 %s.4244>%s.5043 %s x5' "$V6A" "$V6B" "$ns" "$V6A" "$V6B" "$ns" | tr ";" "\n" | LC_ALL=C sort | paste -sd";")"
	expect_eq "EVENT datagrams (one per lost datagram)" "$(tq '[.[] | select(.type == "EVENT") | .datagrams] | add // 0')" 5
}

# start_record OUT ARGS...: udpdrop record in the background, $REC its
# pid, stderr in $T/rec.err; returns once it says it is recording.
# UDPDROP_WRAP: a command to run it under (as start_top).
start_record() {
	local out=$1 i
	shift
	: >"$T/rec.err"
	${UDPDROP_WRAP:-} "$UDPDROP" record -o "$out" "$@" 2>"$T/rec.err" &
	REC=$!
	BG_PIDS+=("$REC")
	for ((i = 0; i < 600; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && return 0
		kill -0 "$REC" 2>/dev/null || break
		sleep 0.1
	done
	fail "udpdrop record did not start: $(cat "$T/rec.err")"
	return 1
}

# stop_record: SIGINT to the recorder start_record began; its exit code must be 0.
stop_record() {
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
}

# Shedding: the recorder stopped (SIGSTOP) while 2,000 datagrams drop
# into a one-page ring. The counts stay exact; the events that did not
# fit are shed, counted per cause, and events + shed = counted skbs, per
# cause (-N: another netns's closing queue may add socket_close shed; see
# test_fault_stop_record).
test_record_shed() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	start_recv "$B" "$V4B:5032" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_record "$T/s.data" -N "$B" -d 3 --ring-size 4K || return
	kill -STOP "$REC"
	local sent=$(send "$A" "$V4B:5032" -c 2000 -s 200)
	kill -CONT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_gt dropped "$dropped" 1500
	tc_records "$T/s.data"
	expect_eq "status" "$(tq '.[-1].status')" complete
	local events=$(tq '[.[] | select(.type == "EVENT")] | length')
	local shed=$(tq '[.[] | select(.type == "SHED") | .shed[]] | add // 0')
	local rcvbuf=$(tq '[.[] | select(.type == "SHED") | .shed["0"] // empty] | add // 0')
	local close=$(tq '(.[] | select(.type == "META") | .meta.causes | split(",") | index("socket_close") | tostring) as $c | [.[] | select(.type == "SHED") | .shed[$c] // empty] | add // 0')
	expect_gt "events shed" "$rcvbuf" 1000
	expect_eq "events + shed rcvbuf = drops" "$((events + rcvbuf))" "$dropped"
	expect_eq "last COUNTS = drops (exact despite shedding)" \
		"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add // 0')" "$dropped"
	expect_eq "SHED: rcvbuf and socket_close alone" "$((shed - rcvbuf - close))" 0
	expect_eq "END shed = SHEDs" "$(tq '[.[] | select(.type == "END")][0].shed | add // 0')" "$shed"
	expect_eq "END events" "$(tq '[.[] | select(.type == "END")][0].events')" "$events"
	local any=
	((close)) && any=", $(commas "$close") of them socket_close of any netns"
	grep -qE "^udpdrop record: $(commas "$dropped") drops, $(commas "$events") events \($(commas "$shed") shed$any\) in " "$T/rec.err" ||
		fail "summary line: $(cat "$T/rec.err")"
}

# Per-CPU event rings: two senders pinned to two CPUs drop into one
# socket; the writer merges the CPUs' rings, so the file's events come from
# both CPUs, in time order, and events + shed = drops. Then the same with
# one ring shared by the CPUs (UDPDROP_SHARED_RING=1: what a kernel that
# takes no ring buffer in an array of maps gets), but for the order; and
# with the rings' array made by libbpf and filled after the load
# (UDPDROP_LIBBPF_EVENT_ARRAY=1), not made by udpdrop and filled while the
# verifier runs; and with three helper threads compressing the file's
# blocks (UDPDROP_PACK_THREADS=3: more threads than CPUs here, blocks done
# out of turn must still be written in order); and the same helpers
# with zlib's blocks (--compression zlib: a 1.3 file, not LZ4's 2.3). The
# others without helpers (the default below 8 CPUs, set so on any host).
test_record_cpu_rings() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	(($(nproc) >= 2)) || { echo "    skip: needs 2 CPUs"; return; }
	setup_hosts || return
	local mode
	for mode in per_cpu libbpf_array shared pack_threads zlib; do
		start_recv "$B" "$V4B:5033" --rcvbuf 4096 || return
		local rpid=$RECV_PID rout=$RECV_OUT p0 s0 s1
		if [[ $mode == shared ]]; then
			UDPDROP_PACK_THREADS=0 UDPDROP_SHARED_RING=1 start_record "$T/c.data" -f -N "$B" -d 3 -v || return
		elif [[ $mode == libbpf_array ]]; then
			UDPDROP_PACK_THREADS=0 UDPDROP_LIBBPF_EVENT_ARRAY=1 start_record "$T/c.data" -f -N "$B" -d 3 -v || return
		elif [[ $mode == pack_threads ]]; then
			UDPDROP_PACK_THREADS=3 start_record "$T/c.data" -f -N "$B" -d 3 -v || return
		elif [[ $mode == zlib ]]; then
			UDPDROP_PACK_THREADS=3 start_record "$T/c.data" -f -N "$B" -d 3 -v --compression zlib || return
		else
			UDPDROP_PACK_THREADS=0 start_record "$T/c.data" -f -N "$B" -d 3 -v || return
		fi
		ip netns exec "$A" taskset -c 0 "$UDPTEST" send "$V4B:5033" -c 3000 -s 200 >"$T/s0" &
		p0=$!
		ip netns exec "$A" taskset -c 1 "$UDPTEST" send "$V4B:5033" -c 3000 -s 200 >"$T/s1"
		wait "$p0"
		wait "$REC"
		expect_eq "$mode: record exit code" "$?" 0
		s0=$(awk '/^sent/ { print $2 }' "$T/s0")
		s1=$(awk '/^sent/ { print $2 }' "$T/s1")
		local got=$(stop_recv "$rpid" "$rout")
		local dropped=$((s0 + s1 - got))
		expect_gt "$mode: dropped" "$dropped" 3000
		if [[ $mode == shared ]]; then
			grep -q 'per-drop events: one ring shared by the CPUs' "$T/rec.err" ||
				fail "shared: no shared-ring line: $(grep -v libbpf "$T/rec.err" | tail -n 3)"
		else
			grep -q 'per-drop events: a ring per CPU' "$T/rec.err" ||
				fail "per_cpu: no per-CPU line: $(grep -v libbpf "$T/rec.err" | tail -n 3)"
		fi
		local packers="the reader compresses the trace's blocks itself (lz4)" version=2.3
		[[ $mode == pack_threads ]] && packers="3 threads compress the trace's blocks (lz4)"
		[[ $mode == zlib ]] && packers="3 threads compress the trace's blocks (zlib)" version=1.3
		grep -qF "$packers" "$T/rec.err" ||
			fail "$mode: no '$packers': $(grep -v libbpf "$T/rec.err" | tail -n 3)"
		tc_records "$T/c.data"
		expect_eq "$mode: the file reads whole" "$(tq '[.[] | select(.type == "STATUS")][0].status')" complete
		expect_eq "$mode: the file's format" "$(tq '[.[] | select(.type == "STATUS")][0].version')" "$version"
		# the magic of the first block: LZ4's in 2.3, zlib's in 1.3
		expect_eq "$mode: the first block's magic" "$(dd if="$T/c.data" bs=1 skip=20 count=4 status=none)" \
			"$([[ $version == 2.3 ]] && echo UDTL || echo UDTB)"
		local events=$(tq '[.[] | select(.type == "EVENT")] | length')
		local rcvbuf=$(tq '[.[] | select(.type == "SHED") | .shed["0"] // empty] | add // 0')
		expect_eq "$mode: events + shed rcvbuf = drops" "$((events + rcvbuf))" "$dropped"
		expect_eq "$mode: events from both CPUs" \
			"$(tq '[.[] | select(.type == "EVENT") | .cpu] | unique | length')" 2
		# merged rings are in time order; one shared ring is in the
		# order the CPUs reserved its room, and each stamps its event
		# after that: two CPUs' events can cross (docs/trace-format.md)
		[[ $mode != shared ]] && expect_eq "$mode: events out of time order" \
			"$(tq '[.[] | select(.type == "EVENT") | .time_ns] as $t | [range(1; $t | length) | select($t[.] < $t[. - 1])] | length')" 0
	done
}

# A drop table too small for the flows (--map-entries 64, 100 ports
# nobody listens on): the drops that find it full go to the overflow
# bucket, which COUNTS carries, so the file's totals stay exact.
test_record_overflow() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	local before=$(mib "$B" Udp NoPorts) p
	start_record "$T/o.data" -N "$B" -d 3 --map-entries 64 || return
	for ((p = 6000; p < 6100; p++)); do
		ip netns exec "$A" "$UDPTEST" send "$V4B:$p" -c 1 -s 100 >/dev/null
	done
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	local noports=$(($(mib "$B" Udp NoPorts) - before))
	expect_eq "UdpNoPorts delta" "$noports" 100
	tc_records "$T/o.data"
	expect_eq "last COUNTS: every drop (table + overflow)" \
		"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add // 0')" 100
	expect_gt "overflow entries' drops" \
		"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.flags == 512) | .datagrams) | add // 0')" 0
	"$UDPDROP" report "$T/o.data" >"$T/o.txt" 2>&1
	grep -q "(drop table full: flow not kept)" "$T/o.txt" || fail "report: no overflow row: $(cat "$T/o.txt")"
	grep -qE "^  no_socket +100 +100$" "$T/o.txt" || fail "report: no_socket total not 100: $(grep -A4 'Totals by cause' "$T/o.txt")"
}

# record -- COMMAND: the command starts a receiver of its own (a child)
# that never reads, sends it 300 datagrams, and kills it with 3 still
# queued (socket_close drops: no socket in the kernel's record, the
# process's by their port); another receiver, not the command's, drops
# at the same time. Only the command's drops are in the trace (counts,
# events, sockets), exactly, and record exits with the command's code;
# the same with --no-events. (SUDO_* unset: the command needs root.)
test_record_command() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	start_recv "$B" "$V4B:5034" --rcvbuf 4096 || return
	local opid=$RECV_PID oout=$RECV_OUT ns
	ns=$(ns_inode "$B")
	cat >"$T/cmd.sh" <<-EOF
		#!/bin/sh
		ip netns exec $B $UDPTEST recv $V4B:5033 --rcvbuf 4096 >\$1.recv 2>&1 &
		r=\$!
		for i in \$(seq 50); do grep -q ready \$1.recv && break; sleep 0.1; done
		ip netns exec $A $UDPTEST send $V4B:5033 -c 300 -s 1000 >\$1.sent
		ip netns exec $A $UDPTEST send $V4B:5034 -c 200 -s 1000 >/dev/null
		sleep 0.2 # a server's life is longer than udpdrop's look at its sockets
		kill -KILL \$r
		wait \$r
		exit 7
	EOF
	chmod +x "$T/cmd.sh"
	local mode other=0 rv
	for mode in events no-events; do
		local flag=()
		[[ $mode == no-events ]] && flag=(--no-events)
		env -u SUDO_UID -u SUDO_GID "$UDPDROP" record -N "$B" -o "$T/c-$mode.data" -i 5 "${flag[@]}" \
			-- "$T/cmd.sh" "$T/c-$mode" 2>"$T/rec.err"
		expect_eq "$mode: record exit code = the command's" "$?" 7
		expect_eq "$mode: command sent" "$(awk '/^sent/ { print $2 }' "$T/c-$mode.sent")" 300
		grep -q "until the command exits" "$T/rec.err" || fail "start line: $(cat "$T/rec.err")"
		tc_records "$T/c-$mode.data"
		rv=$(tq --arg r "$(rcvbuf_reason)" '[.[] | select(.type == "REASONS")][-1].reasons[$r]')
		expect_eq "$mode: status" "$(tq '.[-1].status')" complete
		expect_eq "$mode: META pid_tree" "$(tq '.[0].meta.pid_tree')" 1
		expect_eq "$mode: SOCKETS: only the command's port" \
			"$(tq '[.[] | select(.type == "SOCKETS") | .sockets[] | .lport] | unique | map(tostring) | join(",")')" 5033
		# every datagram sent to the command's receiver was dropped: 297
		# for its full buffer, the 3 it held when it was killed at close
		expect_eq "$mode: last COUNTS: the command's 300 drops only" \
			"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add // 0')" 300
		expect_eq "$mode: of them rcvbuf (the rest: closed with them queued)" \
			"$(tq --argjson r "$rv" '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.reason == $r) | .datagrams) | add // 0')" 297
		if [[ $mode == events ]]; then
			grep -qE "^udpdrop record: 300 drops, 300 events \(0 shed\)" "$T/rec.err" ||
				fail "summary line: $(cat "$T/rec.err")"
			expect_eq "EVENTs: the command's drops only" \
				"$(tq '[.[] | select(.type == "EVENT" and .dport == 5033)] | length'),$(tq '[.[] | select(.type == "EVENT")] | length')" \
				"300,300"
		fi
	done
	other=$((400 - $(stop_recv "$opid" "$oout")))
	expect_gt "the other receiver dropped (not recorded)" "$other" 0

	# exit codes: a signal's, and a command that cannot run (no file left)
	env -u SUDO_UID -u SUDO_GID "$UDPDROP" record -o "$T/k.data" -- sh -c 'kill -TERM $$' 2>/dev/null
	expect_eq "killed by SIGTERM: exit" "$?" 143
	"$UDPDROP" record -o "$T/n.data" -- "$T/no-such-command" 2>"$T/err"
	expect_eq "no such command: exit" "$?" 127
	grep -q "cannot run $T/no-such-command: No such file or directory" "$T/err" ||
		fail "no such command: $(cat "$T/err")"
	[[ -e $T/n.data ]] && fail "a command that could not run left a file"
	"$UDPDROP" record -o "$T/n.data" -- /etc/passwd 2>/dev/null
	expect_eq "not executable: exit" "$?" 126

	# through sudo: the command runs as that user, who gets the file
	if id nobody >/dev/null 2>&1; then
		chmod 0777 "$T"
		SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) "$UDPDROP" record -o "$T/u.data" -- \
			sh -c "id -u >$T/uid" 2>"$T/err"
		expect_eq "as the sudo user: exit" "$?" 0
		expect_eq "the command's uid" "$(cat "$T/uid" 2>/dev/null)" "$(id -u nobody)"
		expect_eq "the file's owner" "$(stat -c %U "$T/u.data")" nobody
		expect_eq "the file's mode" "$(stat -c %a "$T/u.data")" 600
	fi
	return 0
}

# record -p PID: only the sockets of that process; stops when it exits.
test_record_pid() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	start_recv "$B" "$V4B:5035" --rcvbuf 4096 || return
	local p1=$RECV_PID o1=$RECV_OUT
	start_recv "$B" "$V4B:5036" --rcvbuf 4096 || return
	local p2=$RECV_PID o2=$RECV_OUT
	start_record "$T/p.data" -p "$p1" -i 0.3 || return
	local s1=$(send "$A" "$V4B:5035" -c 100 -s 1000)
	send "$A" "$V4B:5036" -c 100 -s 1000 >/dev/null
	sleep 0.5
	local d1=$((s1 - $(stop_recv "$p1" "$o1")))
	local d2=$((100 - $(stop_recv "$p2" "$o2")))
	expect_gt "the other receiver dropped" "$d2" 0
	wait "$REC"
	expect_eq "record exit (the process exited)" "$?" 0
	grep -q "process $p1 exited" "$T/rec.err" || fail "no exit line: $(cat "$T/rec.err")"
	tc_records "$T/p.data"
	expect_eq "COUNTS: pid's drops only" \
		"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add // 0')" "$d1"
	expect_eq "EVENTs: pid's drops only" "$(tq '[.[] | select(.type == "EVENT" and .dport == 5035)] | length'),$(tq '[.[] | select(.type == "EVENT")] | length')" "$d1,$d1"
	"$UDPDROP" record -o "$T/q.data" -p 999999999 2>/dev/null
	expect_eq "-p no such process: exit" "$?" 2
	[[ -e $T/q.data ]] && fail "-p of no process left a file"
	return 0
}

# -N and closing sockets: the kernel's record of a purged queue has no
# netns, so the recorder keeps only the queues the model attributes to a
# socket of that netns: B's, not those of a socket on the same port in C.
test_record_netns_close() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	local C=udt-$$-c
	ip netns add "$C" && ip -n "$C" link set lo up || { fail "netns C"; return; }
	EXTRA_NETNS+=("$C")
	start_recv "$C" "127.0.0.1:5041" --rcvbuf 1000000 || return
	local cpid=$RECV_PID
	start_recv "$B" "$V4B:5041" --rcvbuf 1000000 || return
	local rpid=$RECV_PID
	start_record "$T/n.data" -N "$B" -d 4 -i 0.5 || return
	send "$A" "$V4B:5041" -c 25 -s 200 >/dev/null
	send "$C" "127.0.0.1:5041" -c 10 -s 200 >/dev/null
	sleep 0.6
	{ kill -KILL "$rpid" "$cpid"; wait "$rpid" "$cpid"; } 2>/dev/null
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	tc_records "$T/n.data"
	expect_eq "COUNTS: B's 25 closed-queue drops only" \
		"$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add // 0')" 25
	expect_eq "EVENTs: B's only" "$(tq '[.[] | select(.type == "EVENT")] | length')" 25
	# the advice for it: read before close(), with the count
	local f=$("$UDPDROP" report --json "$T/n.data" | jq -r '[.advice[] | select(.cause == "socket_close")] |
		if length == 1 then .[0] | "\(.evidence) | \(.change)" else "\(length) findings" end')
	local want
	for want in "25 datagrams" "still queued, never read" "Read the socket until EAGAIN before close()"; do
		[[ $f == *"$want"* ]] || fail "socket_close advice lacks '$want': $f"
	done
}

# Advice from a recording, for causes beyond rcvbuf, with the numbers of
# the scenario: fragments that never complete (nft drops every last
# fragment; 3000 B datagrams over MTU 1500 are 3 fragments each), and
# datagrams to a port nobody listens on.
test_record_advice_causes() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	lose_last_fragments "$B" || { fail "nft"; return; }
	start_recv "$B" "$V4B:5007" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_record "$T/a.data" -N "$B" -d 4 -i 0.5 || return
	send "$A" "$V4B:5007" -c 30 -s 3000 >/dev/null
	send "$A" "$V4B:5008" -c 20 -s 100 >/dev/null
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	expect_eq "read by the app" "$(stop_recv "$rpid" "$rout")" 0
	"$UDPDROP" report --json "$T/a.data" >"$T/a.json" 2>"$T/a.err"
	expect_eq "report exit" "$?" 0
	# the 30 datagrams are the socket's (as top shows them: the model
	# matched their flow to it); the fragments without a UDP header stay a
	# flow of skb events, with top's finding for it
	local frag=$(jq -r '[.advice[] | select(.cause == "frag_timeout" and .socket != null)] | if length == 1 then .[0] | "\(.evidence) \(.change)" else "count \(length)" end' "$T/a.json")
	expect_eq "frag_timeout on the socket" \
		"$(jq -r '.sockets[] | select(.local | endswith(":5007")) | .causes.frag_timeout' "$T/a.json")" 30
	expect_eq "frag_timeout: the headerless fragments' finding" \
		"$(jq -r '[.advice[] | select(.cause == "frag_timeout" and .socket == null) | .evidence | startswith("0 datagrams (30 skb events)")] | tostring' "$T/a.json")" '[true]'
	local nosock=$(jq -r '[.advice[] | select(.cause == "no_socket")] | if length == 1 then .[0] | "\(.what) \(.evidence)" else "count \(length)" end' "$T/a.json")
	local want
	# (no "1 - (1 - p)^3" here: the socket's share has one skb per datagram,
	# its other fragments are the headerless flow's, as in top)
	for want in "30 datagrams" "IpReasmFails +30" "MTU 1,500 on veth0" "above 1472 B" \
		"ipfrag_time = 1 s" "send at most 1472 B per datagram"; do
		[[ $frag == *"$want"* ]] || fail "frag_timeout advice lacks '$want': $frag"
	done
	for want in "nothing listens on port 5008" "20 datagrams" "UdpNoPorts +20"; do
		[[ $nosock == *"$want"* ]] || fail "no_socket advice lacks '$want': $nosock"
	done

	# the advice followed: the same 30 datagrams at 1472 B, the size it
	# named, are not fragmented, and the same rule drops none of them
	start_recv "$B" "$V4B:5009" --read || return
	rpid=$RECV_PID rout=$RECV_OUT
	start_record "$T/b.data" -N "$B" -d 3 -i 0.5 || return
	send "$A" "$V4B:5009" -c 30 -s 1472 >/dev/null
	wait "$REC"
	expect_eq "after the advice: read by the app" "$(stop_recv "$rpid" "$rout")" 30
	expect_eq "after the advice: drops recorded" \
		"$("$UDPDROP" report --json "$T/b.data" | jq '.totals.drops')" 0
}

# More causes' advice, each with the scenario's numbers: a bad checksum,
# an nft rule, a socket filter (receiver side, one recording of B), and
# a tbf qdisc too small for the sender (a recording of A).
test_record_advice_more() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table inet udt {
		chain in {
			type filter hook input priority 0;
			udp dport 5004 counter drop
		}
	}
	EOF
	start_recv "$B" "$V4B:5003" --read || return
	local p1=$RECV_PID
	start_recv "$B" "$V4B:5004" --read || return
	local p2=$RECV_PID
	start_recv "$B" "$V4B:5006" --filter-drop || return
	local p3=$RECV_PID
	start_record "$T/m.data" -N "$B" -d 3 -i 0.5 || return
	send "$A" "$V4B:5003" -c 40 --bad-csum --src "$V4A" >/dev/null
	send "$A" "$V4B:5004" -c 60 >/dev/null
	send "$A" "$V4B:5006" -c 30 >/dev/null
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	"$UDPDROP" report --json "$T/m.data" >"$T/m.json" || fail "report --json"
	adv() { # FILE CAUSE: that cause's one finding, what/evidence/change on one line
		jq -r --arg c "$2" '[.advice[] | select(.cause == $c)] | if length == 1
			then .[0] | "\(.what) | \(.evidence) | \(.change)" else "\(length) findings" end' "$1"
	}
	local f want
	f=$(adv "$T/m.json" checksum)
	for want in "bad checksum" "40 datagrams" "UdpInCsumErrors +40" "tcpdump -vvni any udp port 5003"; do
		[[ $f == *"$want"* ]] || fail "checksum advice lacks '$want': $f"
	done
	f=$(adv "$T/m.json" netfilter)
	for want in "netfilter" "60 datagrams" "nft list ruleset"; do
		[[ $f == *"$want"* ]] || fail "netfilter advice lacks '$want': $f"
	done
	f=$(adv "$T/m.json" socket_filter)
	for want in "socket filter" "30 datagrams"; do
		[[ $f == *"$want"* ]] || fail "socket_filter advice lacks '$want': $f"
	done

	ip netns exec "$A" tc qdisc add dev veth0 root tbf rate 1mbit burst 1600 limit 1600 ||
		{ fail "tc tbf"; return; }
	local before=$(mib "$A" Udp SndbufErrors)
	start_record "$T/q.data" -N "$A" -d 2 -i 0.5 || return
	ip netns exec "$A" "$UDPTEST" send "$V4B:5007" -c 200 -s 1000 --sport 6007 --linger-ms 1500 >/dev/null
	wait "$REC"
	local sndbuf=$(($(mib "$A" Udp SndbufErrors) - before))
	expect_gt "UdpSndbufErrors delta" "$sndbuf" 0
	"$UDPDROP" report --json "$T/q.data" >"$T/q.json" || fail "report --json (qdisc)"
	f=$(adv "$T/q.json" qdisc)
	# 1042 B: the 1000-byte payload with its UDP and IP headers, as sent
	for want in "$sndbuf datagrams" "UdpSndbufErrors +$sndbuf" "txqueuelen 1,000" \
		"1042 B x 1,000" "tc -s qdisc show dev veth0"; do
		[[ $f == *"$want"* ]] || fail "qdisc advice lacks '$want': $f"
	done
}

# Bad input: nothing overwritten, nothing half-written left behind.
test_record_bad_input() {
	local rc
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	echo precious >"$T/exists.data"
	"$UDPDROP" record -o "$T/exists.data" -d 1 2>"$T/err"
	rc=$?
	expect_eq "existing file without -f: exit" "$rc" 2
	grep -q -- '-f' "$T/err" || fail "the message does not name -f: $(cat "$T/err")"
	expect_eq "existing file untouched" "$(cat "$T/exists.data")" precious

	"$UDPDROP" record -o "$T/d.data" -d bad 2>"$T/err"
	expect_eq "-d bad: exit" "$?" 2
	[[ -e $T/d.data ]] && fail "-d bad left a file"
	"$UDPDROP" record -o "$T/d.data" -d 0 2>/dev/null
	expect_eq "-d 0: exit" "$?" 2
	"$UDPDROP" record -o "$T/d.data" -i 0 2>/dev/null
	expect_eq "-i 0: exit" "$?" 2
	"$UDPDROP" record -o "$T/d.data" --port 0 2>/dev/null
	expect_eq "--port 0: exit" "$?" 2
	"$UDPDROP" record -o "$T/d.data" -N no-such-netns-$$ 2>/dev/null
	expect_eq "-N unknown: exit" "$?" 2
	"$UDPDROP" record -o "$T/d.data" extra 2>/dev/null
	expect_eq "stray argument: exit" "$?" 2
	"$UDPDROP" record -o "$T/d.data" --compression zstd 2>"$T/err"
	expect_eq "--compression zstd: exit" "$?" 2
	grep -q "lz4 or zlib" "$T/err" || fail "--compression zstd: the message does not name lz4 and zlib: $(cat "$T/err")"
	[[ -e $T/d.data ]] && fail "a usage error left a file"

	# unwritable: a directory that does not exist, and one that is not
	# writable for a user without CAP_DAC_OVERRIDE (root passes that)
	"$UDPDROP" record -o "$T/no/such/dir/t.data" -d 1 2>"$T/err"
	rc=$?
	expect_eq "unwritable path: exit" "$rc" 1
	grep -q "$T/no/such/dir/t.data: No such file or directory" "$T/err" ||
		fail "the message does not name the path and the error: $(cat "$T/err")"
	[[ -e $T/no/such/dir/t.data ]] && fail "unwritable path left a file"
	mkdir "$T/ro"
	chattr +i "$T/ro" 2>/dev/null && {
		"$UDPDROP" record -o "$T/ro/t.data" -d 1 2>"$T/err"
		rc=$?
		chattr -i "$T/ro"
		expect_eq "immutable directory: exit" "$rc" 1
		grep -q "$T/ro/t.data" "$T/err" || fail "the message does not name the path: $(cat "$T/err")"
		[[ -e $T/ro/t.data ]] && fail "immutable directory left a file"
	}

	# -f overwrites in place, keeping the file's mode, and the result is
	# a whole trace
	chmod 0640 "$T/exists.data"
	"$UDPDROP" record -f -o "$T/exists.data" -d 0.5 2>"$T/err"
	expect_eq "-f: exit" "$?" 0
	expect_eq "-f: file mode kept" "$(stat -c %a "$T/exists.data")" 640
	if [[ -x $TRACECAT ]]; then
		tc_records "$T/exists.data"
		expect_eq "-f: overwritten with a complete trace" "$(tq '.[-1].status')" complete
	fi

	# not root: exit 3, naming sudo, no file
	if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
		chmod 0777 "$T"
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
			"$UDPDROP" record -o "$T/np.data" -d 1 2>"$T/err"
		rc=$?
		expect_eq "not root: exit" "$rc" 3
		grep -q sudo "$T/err" || fail "the message does not name sudo: $(cat "$T/err")"
		[[ -e $T/np.data ]] && fail "not root left a file"
	fi
	return 0
}

# gone PID: has the process ended (no such pid, or a zombie not reaped yet)?
proc_gone() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[[ -z $st || $st == Z || $st == X ]]
}

# record -- COMMAND, and udpdrop killed with SIGKILL: the command goes
# with it (its death signal, SIGTERM; SIGKILL when udpdrop was started
# with SIGTERM ignored, which the command inherits), as root and as the
# user behind sudo (the switch clears a death signal set before it).
test_record_command_killed() {
	setup_hosts || return
	local as child i ign
	chmod 0777 "$T"
	for as in root nobody ignored; do
		local env=(env -u SUDO_UID -u SUDO_GID) pre=()
		[[ $as == nobody ]] && env=(env SUDO_UID="$(id -u nobody)" SUDO_GID="$(id -g nobody)")
		# a shell that ignores SIGTERM, then becomes udpdrop
		[[ $as == ignored ]] && pre=(bash -c 'trap "" TERM; exec "$@"' ignterm)
		"${env[@]}" "${pre[@]}" "$UDPDROP" record -o "$T/k-$as.data" -- sleep 300 2>"$T/k.err" &
		local rec=$!
		BG_PIDS+=("$rec")
		child=
		for ((i = 0; i < 100; i++)); do
			child=$(pgrep -P "$rec" -x sleep)
			[[ -n $child ]] && grep -q 'recording UDP drops' "$T/k.err" && break
			sleep 0.1
		done
		[[ -n $child ]] || { fail "$as: no command under udpdrop record: $(cat "$T/k.err")"; continue; }
		[[ $as == nobody ]] && expect_eq "$as: the command's user" "$(stat -c %U "/proc/$child")" nobody
		# SIGTERM (15) ignored by the command as by udpdrop: SigIgn bit 14
		[[ $as == ignored ]] && expect_eq "$as: the command ignores SIGTERM" \
			"$(( 0x$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$child/status") >> 14 & 1 ))" 1
		kill -KILL "$rec"
		wait "$rec" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			proc_gone "$child" && break
			sleep 0.1
		done
		if proc_gone "$child"; then
			echo "    ok: $as: the command ended with udpdrop"
		else
			fail "$as: the command (pid $child) still runs 5 s after udpdrop was killed"
			kill -KILL "$child"
		fi
	done
}

# node FILE: what a name is, for "unchanged" checks: type, mode, major:minor
# (hex, as stat prints them) and, for a symlink, its target.
node() { stat -c '%F %a %t:%T %N' "$1"; }

# record's output named as a character device (a stand-in for /dev/null
# made here), a symlink to /proc/self/fd/1, a FIFO with and without a
# reader, a directory and a block device: written through or refused,
# never chmod'ed, replaced or removed, and never a hang.
test_record_output_targets() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	local n=$T/null rc before

	# a character device: written through with or without -f, mode kept
	mknod -m 666 "$n" c 1 3 || { fail "mknod"; return; }
	before=$(node "$n")
	"$UDPDROP" record -f -d 0.5 -o "$n" 2>"$T/err"
	expect_eq "-f to a char device: exit" "$?" 0
	expect_eq "-f to a char device: node unchanged (mode 666)" "$(node "$n")" "$before"
	"$UDPDROP" record -d 0.5 -o "$n" 2>"$T/err"
	expect_eq "char device without -f: exit" "$?" 0
	expect_eq "char device without -f: node unchanged" "$(node "$n")" "$before"
	# a recording that fails before it ran removes what it created, never
	# the device it wrote to (as root: -o /dev/null)
	"$UDPDROP" record -f -o "$n" -- "$T/no-such-command" 2>"$T/err"
	expect_eq "failed command: exit" "$?" 127
	expect_eq "failed command: char device still there, unchanged" "$(node "$n" 2>&1)" "$before"

	# a symlink to standard output: written through, the link kept, no -f
	# needed for a pipe; the reader gets a whole trace
	ln -s /proc/self/fd/1 "$T/stdout"
	"$UDPDROP" record -d 0.5 -o "$T/stdout" 2>"$T/err" | cat >"$T/piped.data"
	expect_eq "symlink to a pipe: exit" "${PIPESTATUS[0]}" 0
	expect_eq "symlink kept" "$(stat -c %N "$T/stdout")" "'$T/stdout' -> '/proc/self/fd/1'"
	tc_records "$T/piped.data"
	expect_eq "through the symlink: a complete trace" "$(tq '.[-1].status')" complete
	# stdout a regular file: that is overwriting, -f; in place, its mode
	# kept, the link kept
	: >"$T/out.data"
	chmod 0644 "$T/out.data"
	"$UDPDROP" record -d 0.5 -o "$T/stdout" >"$T/out.data" 2>"$T/err"
	expect_eq "symlink to a regular file without -f: exit" "$?" 2
	"$UDPDROP" record -f -d 0.5 -o "$T/stdout" >"$T/out.data" 2>"$T/err"
	expect_eq "symlink to a regular file with -f: exit" "$?" 0
	[[ -L $T/stdout ]] || fail "-f replaced the symlink: $(ls -l "$T")"
	expect_eq "stdout's file mode kept" "$(stat -c %a "$T/out.data")" 644
	tc_records "$T/out.data"
	expect_eq "-f through the symlink: a complete trace" "$(tq '.[-1].status')" complete

	# a FIFO without a reader: one line, exit 1, at once (timeout: the
	# old open() waited forever), the FIFO left as it was
	mkfifo -m 644 "$T/fifo"
	before=$(node "$T/fifo")
	timeout 20 "$UDPDROP" record -f -d 0.5 -o "$T/fifo" 2>"$T/err"
	expect_eq "FIFO without a reader: exit" "$?" 1
	expect_eq "FIFO without a reader: the line" "$(cat "$T/err")" \
		"udpdrop record: $T/fifo is a FIFO with no reader: start the reader first"
	expect_eq "FIFO without a reader: FIFO unchanged" "$(node "$T/fifo")" "$before"
	# with one: a whole trace reaches it, with or without -f, mode kept
	local f
	for f in "" -f; do
		timeout 60 cat "$T/fifo" >"$T/fifo.data" &
		local reader=$! i
		BG_PIDS+=("$reader")
		# until cat is in its open(): a reader from then on
		for ((i = 0; i < 100; i++)); do
			"$UDPDROP" record $f -d 0.5 -o "$T/fifo" 2>"$T/err"
			rc=$?
			((rc == 1)) && grep -q 'with no reader' "$T/err" || break
			sleep 0.1
		done
		expect_eq "FIFO with a reader ${f:-without -f}: exit" "$rc" 0
		wait "$reader"
		expect_eq "FIFO ${f:-without -f}: FIFO unchanged" "$(node "$T/fifo")" "$before"
		tc_records "$T/fifo.data"
		expect_eq "FIFO ${f:-without -f}: the reader got a complete trace" "$(tq '.[-1].status')" complete
		# a FIFO has no size to stat: record counts what it wrote (KiB,
		# or MiB where other drops on a busy machine came in: no -N here)
		grep -qF "written to $T/fifo ($(iec "$(stat -c %s "$T/fifo.data")"))" "$T/err" ||
			fail "FIFO: the summary's size is not the $(stat -c %s "$T/fifo.data") bytes written: $(cat "$T/err")"
	done

	# a reader that goes away: said, exit 1 (not a silent SIGPIPE death),
	# the FIFO left as it was
	timeout 60 head -c 100 "$T/fifo" >/dev/null &
	reader=$!
	BG_PIDS+=("$reader")
	for ((i = 0; i < 100; i++)); do
		"$UDPDROP" record -f -d 2 -i 0.2 -o "$T/fifo" 2>"$T/err"
		rc=$?
		((rc == 1)) && grep -q 'with no reader' "$T/err" || break
		sleep 0.1
	done
	expect_eq "FIFO whose reader left: exit" "$rc" 1
	grep -qx "udpdrop record: cannot write $T/fifo: Broken pipe" "$T/err" ||
		fail "FIFO whose reader left: no 'Broken pipe' line: $(cat "$T/err")"
	expect_eq "FIFO whose reader left: FIFO unchanged" "$(node "$T/fifo")" "$before"
	wait "$reader"

	# refused, -f or not, exit 2, one line naming what to do; never opened
	mkdir "$T/dir"
	mknod -m 600 "$T/blk" b 240 0 # a major for local use: no driver behind it
	local what
	for what in dir:"is a directory: name a file in it" \
		blk:"is a block device, which udpdrop never writes to: name a regular file"; do
		before=$(node "$T/${what%%:*}")
		"$UDPDROP" record -f -d 0.5 -o "$T/${what%%:*}" 2>"$T/err"
		expect_eq "${what%%:*}: exit" "$?" 2
		expect_eq "${what%%:*}: the line" "$(cat "$T/err")" "udpdrop record: $T/${what%%:*} ${what#*:}"
		expect_eq "${what%%:*}: unchanged" "$(node "$T/${what%%:*}")" "$before"
	done
	ln -s missing "$T/dangling"
	"$UDPDROP" record -f -d 0.5 -o "$T/dangling" 2>"$T/err"
	expect_eq "dangling symlink: exit" "$?" 2
	[[ -e $T/missing ]] && fail "a file was made through the dangling symlink"
	expect_eq "nothing else left behind" "$(cd "$T" && ls | sort | tr '\n' ' ')" \
		"blk dangling dir err fifo fifo.data null out.data piped.data stdout trace.json "
	return 0
}

# A full disk at the start (a 64 KiB tmpfs filled first): exit 1, one line,
# and the file it created removed; a file given with -f is kept (empty),
# never removed.
test_record_full_disk() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap 'umount "$T/mnt" 2>/dev/null; cleanup' EXIT
	mkdir "$T/mnt"
	mount -t tmpfs -o size=64k,mode=0755 udpdrop-test "$T/mnt" || { fail "mount tmpfs"; return; }
	: >"$T/mnt/old.data" # empty: emptying it frees no room
	chmod 0640 "$T/mnt/old.data"
	dd if=/dev/zero of="$T/mnt/fill" bs=4k 2>/dev/null
	"$UDPDROP" record -d 0.5 -o "$T/mnt/t.data" 2>"$T/err"
	expect_eq "full disk: exit" "$?" 1
	expect_eq "full disk: the line" "$(cat "$T/err")" \
		"udpdrop record: cannot write $T/mnt/t.data: No space left on device"
	[[ -e $T/mnt/t.data ]] && fail "full disk: left $(stat -c '%s bytes' "$T/mnt/t.data")"
	# -f over an existing file: not removed, its mode kept
	"$UDPDROP" record -f -d 0.5 -o "$T/mnt/old.data" 2>"$T/err"
	expect_eq "full disk, -f: exit" "$?" 1
	expect_eq "full disk, -f: kept, empty, mode kept" "$(stat -c '%s %a' "$T/mnt/old.data" 2>&1)" "0 640"
	expect_eq "full disk: nothing else left" "$(ls "$T/mnt" | tr '\n' ' ')" "fill old.data "
	umount "$T/mnt"
}
