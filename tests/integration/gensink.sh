# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of `udpdrop gen`, `udpdrop sink` and `udpdrop demo`:
# real datagrams between two namespaces, and the ledger checked against
# every witness (what gen sent, sequence gaps, XDP, the tracer, nft
# counters, SO_RXQ_OVFL, the kernel's MIB counters). Sourced by run.sh.

# start_sink ADDR:PORT ARGS...: udpdrop sink -1 --json in $B; ready when it
# says it is listening.
start_sink() {
	SINK_OUT=$T/sink.json SINK_ERR=$T/sink.err
	: >"$SINK_OUT"
	: >"$SINK_ERR"
	ip netns exec "$B" "$UDPDROP" sink "$@" --one-off --json >"$SINK_OUT" 2>"$SINK_ERR" &
	SINK_PID=$!
	BG_PIDS+=("$SINK_PID")
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$SINK_ERR" && return 0
		kill -0 "$SINK_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "udpdrop sink did not start: $(cat "$SINK_ERR")"
	return 1
}

# wait_sink: its exit code must be 0; the run's final object in $T/sink.final.
wait_sink() {
	local rc
	wait "$SINK_PID"
	rc=$?
	expect_eq "sink exit code" "$rc" 0
	grep '"final":true' "$SINK_OUT" | tail -n 1 >"$T/sink.final"
	[[ -s $T/sink.final ]] || { fail "no final object from the sink: $(tail -c 300 "$SINK_OUT") $(cat "$SINK_ERR")"; return 1; }
}

# run_gen ARGS...: udpdrop gen --json in $A, to completion; final object in $T/gen.final.
run_gen() {
	local rc
	ip netns exec "$A" "$UDPDROP" gen "$@" --json >"$T/gen.json" 2>"$T/gen.err"
	rc=$?
	expect_eq "gen exit code" "$rc" 0
	tail -n 1 "$T/gen.json" >"$T/gen.final"
	[[ $(jq -r .final "$T/gen.final" 2>/dev/null) == true ]] ||
		{ fail "no final object from gen: $(tail -c 300 "$T/gen.json") $(cat "$T/gen.err")"; return 1; }
}

led() { jq -r ".ledger$1" "$T/sink.final"; }    # the sink's ledger
gled() { jq -r ".ledger$1" "$T/gen.final"; }    # the ledger gen got back
nft_packets() { # NS FAMILY TABLE CHAIN: the first counter's packets
	ip netns exec "$1" nft -j list chain "$2" "$3" "$4" |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets][0]'
}

# Both sides print the same ledger, and the identity holds with no remainder.
expect_ledger_exact() {
	expect_eq "unexplained" "$(led .unexplained)" 0
	expect_eq "lost before the host" "$(led .lost_before_host)" "${1:-0}"
	expect_eq "gen's copy of the ledger" "$(gled '| del(.seconds)' | jq -cS .)" "$(led '| del(.seconds)' | jq -cS .)"
	local f
	for f in $(seq 0 $(($(led '.flows | length') - 1))); do
		expect_eq "flow $f unexplained" "$(led ".flows[$f].unexplained")" 0
	done
}

# No drops anywhere: every datagram read, four flows, every witness agrees.
# The rate and buffer leave an emulated CPU's reader room: 1250 datagrams/s
# with ~185 of them queued (208K doubled, ~2.3 KiB truesize each) before one drops.
test_gen_sink_clean() {
	setup_hosts || return
	start_sink "$V4B:5010" --xdp veth0 --rcvbuf 208K || return
	run_gen "$V4B:5010" --count 4000 --rate 10M --flows 4 --size 1000 || return
	wait_sink || return
	expect_eq "sent" "$(led .sent)" 4000
	expect_eq "read" "$(led .read)" 4000
	expect_eq "xdp seen" "$(led .xdp_seen)" 4000
	expect_eq "receiver drops" "$(led .receiver_drops)" 0
	expect_eq "sender drops" "$(led .sender_drops)" 0
	expect_eq "seq lost" "$(led .seq_lost)" 0
	expect_eq "flows" "$(led '.flows | map(.read) | join(",")')" "1000,1000,1000,1000"
	expect_eq "measured" "$(led '.measured | [.sent, .sender, .xdp, .tracer] | all')" true
	expect_eq "gen: datagrams" "$(jq -r .datagrams "$T/gen.final")" 4000
	expect_eq "gen: distinct source ports" "$(jq -r '[.per_flow[].sport] | unique | length' "$T/gen.final")" 4
	expect_ledger_exact
}

# Jones and Zhu's case: 1 KiB datagrams into a small buffer with a
# stalling reader. tracer's drops == sequence gaps == SO_RXQ_OVFL ==
# XDP seen - read - unread == UdpRcvbufErrors.
test_gen_sink_rcvbuf() {
	setup_hosts || return
	local before=$(mib "$B" Udp RcvbufErrors)
	start_sink "$V4B:5011" --xdp veth0 --rcvbuf 16K --stall 200 --every 500 || return
	run_gen "$V4B:5011" --count 20000 --rate 50M --size 1024 || return
	wait_sink || return
	local drops=$(led .receiver_drops)
	expect_gt "receiver drops" "$drops" 100
	expect_eq "by cause: rcvbuf" "$(led .receiver_drops_by_cause.rcvbuf)" "$drops"
	expect_eq "sequence gaps" "$(led .seq_lost)" "$drops"
	expect_eq "SO_RXQ_OVFL" "$(led .rxq_ovfl)" "$drops"
	expect_eq "xdp seen - read - unread" "$(led '| .xdp_seen - .read - .unread')" "$drops"
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$drops"
	expect_eq "sent" "$(led .sent)" 20000
	expect_ledger_exact
}

# nft on the receiver drops every tenth datagram: receiver kernel drops,
# cause netfilter, exactly the rule's counter.
test_gen_sink_netfilter_receiver() {
	setup_hosts || return
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table inet udt {
		chain in {
			type filter hook input priority 0;
			udp dport 5012 numgen inc mod 10 == 0 counter drop
		}
	}
	EOF
	start_sink "$V4B:5012" --xdp veth0 || return
	run_gen "$V4B:5012" --count 3000 --rate 20M || return
	wait_sink || return
	local n=$(nft_packets "$B" inet udt in)
	expect_eq "nft counter" "$n" 300
	expect_eq "receiver drops: netfilter" "$(led .receiver_drops_by_cause.netfilter)" "$n"
	# a busy machine may also make the sink fall behind for a moment: those
	# are rcvbuf drops, counted as such (SO_RXQ_OVFL), never netfilter's
	local rb=$(led '.receiver_drops_by_cause.rcvbuf // 0')
	expect_eq "receiver drops (netfilter + rcvbuf)" "$(led .receiver_drops)" "$((n + rb))"
	expect_eq "rcvbuf drops = SO_RXQ_OVFL" "$rb" "$(led .rxq_ovfl)"
	expect_eq "sender drops" "$(led .sender_drops)" 0
	expect_eq "seq lost" "$(led .seq_lost)" "$((n + rb))"
	expect_eq "read" "$(led .read)" "$((3000 - n - rb))"
	expect_ledger_exact
}

# The same rule on the sender's interface egress: sender drops, not loss
# in the network, and gen's tracer names the cause.
test_gen_sink_netfilter_sender() {
	setup_hosts || return
	ip netns exec "$A" nft -f - <<-EOF || { fail "nft egress hook"; return; }
	table netdev udt {
		chain out {
			type filter hook egress device veth0 priority 0;
			udp dport 5013 numgen inc mod 10 == 0 counter drop
		}
	}
	EOF
	start_sink "$V4B:5013" --xdp veth0 || return
	run_gen "$V4B:5013" --count 3000 --rate 20M || return
	wait_sink || return
	local n=$(nft_packets "$A" netdev udt out)
	expect_eq "nft counter" "$n" 300
	expect_eq "sender drops" "$(led .sender_drops)" "$n"
	expect_eq "sender drops: netfilter (gen's tracer)" "$(led .sender_drops_by_cause.netfilter)" "$n"
	expect_eq "receiver drops" "$(led .receiver_drops)" 0
	expect_eq "xdp seen" "$(led .xdp_seen)" 2700
	expect_ledger_exact
}

# 4000-byte datagrams (three fragments); nft drops the last fragment of
# every fifth. Each lost datagram counts once: frag_timeout, == the nft
# counter == sequence gaps == IpReasmTimeout.
test_gen_sink_frag() {
	setup_hosts || return
	TIMER_DROPS=1
	ip netns exec "$B" sysctl -qw net.ipv4.ipfrag_time=1
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table ip udt {
		chain pre {
			type filter hook prerouting priority -450;
			ip frag-off & 0x1fff != 0 ip frag-off & 0x2000 == 0 numgen inc mod 5 == 0 counter drop
		}
	}
	EOF
	local tmo=$(mib "$B" Ip ReasmTimeout)
	start_sink "$V4B:5014" --xdp veth0 || return
	run_gen "$V4B:5014" --count 500 --rate 4M --size 4000 || return
	wait_sink || return
	local n=$(nft_packets "$B" ip udt pre)
	expect_eq "nft counter" "$n" 100
	expect_eq "gen warned about fragmentation" "$(grep -c -i 'fragment' "$T/gen.err" | grep -v '^0$' >/dev/null && echo yes)" yes
	expect_eq "receiver drops: frag_timeout" "$(led .receiver_drops_by_cause.frag_timeout)" "$n"
	expect_eq "receiver drops (once per datagram)" "$(led .receiver_drops)" "$n"
	expect_eq "seq lost" "$(led .seq_lost)" "$n"
	expect_eq "IpReasmTimeout delta" "$(($(mib "$B" Ip ReasmTimeout) - tmo))" "$n"
	expect_eq "xdp seen (first fragments)" "$(led .xdp_seen)" 500
	expect_ledger_exact
}

# Fragmented datagrams through a full qdisc on the sender: the qdisc may
# cut a datagram after its first fragment left, which is then both a
# sender drop and seen by XDP. The ledger cannot be exact there, and must
# say so rather than print a remainder without a reason.
test_gen_sink_frag_sender_caveat() {
	setup_hosts || return
	ip netns exec "$A" tc qdisc add dev veth0 root tbf rate 5mbit burst 1600 limit 16000 ||
		{ fail "tc tbf"; return; }
	start_sink "$V4B:5022" --xdp veth0 || return
	run_gen "$V4B:5022" --count 500 --rate 20M --size 4000 || return
	wait_sink || return
	expect_gt "sender drops" "$(led .sender_drops)" 0
	expect_gt "sender drops: qdisc" "$(led .sender_drops_by_cause.qdisc)" 0
	expect_eq "caveat" "$(led '.caveat | startswith("fragmented datagrams and sender drops")')" true
	expect_eq "gen's copy has the caveat" "$(gled '.caveat != null')" true
}

# Over IPv6 to a sink on [::], with the generator's own accounting closing
# the run (no control channel).
test_gen_sink_ipv6_no_control() {
	setup_hosts || return
	start_sink "[::]:5015" --xdp veth0 --rcvbuf 8K --stall 100 --every 300 || return
	run_gen "[$V6B]:5015" --count 6000 --rate 30M --size 800 --flows 2 --no-control || return
	wait_sink || return
	local drops=$(led .receiver_drops)
	expect_eq "sent (from the last datagrams' totals)" "$(led .sent)" 6000
	expect_eq "sender drops: unknown without control" "$(led .sender_drops)" null
	expect_gt "receiver drops" "$drops" 0
	expect_eq "rcvbuf" "$(led .receiver_drops_by_cause.rcvbuf)" "$drops"
	expect_eq "seq lost" "$(led .seq_lost)" "$drops"
	expect_eq "unexplained" "$(led .unexplained)" 0
	expect_eq "read + drops + unread" "$(led '| .read + .receiver_drops + .unread')" 6000
}

# Datagrams sent out of order (gen swaps seq 10k and 10k+1 in each batch
# of ten) are late, not lost.
test_gen_sink_reorder() {
	setup_hosts || return
	start_sink "$V4B:5016" --xdp veth0 || return
	run_gen "$V4B:5016" --count 4000 --rate 20M --burst 10 --reorder 10 || return
	wait_sink || return
	expect_eq "reordered" "$(led .reordered)" 400
	expect_eq "seq lost" "$(led .seq_lost)" 0
	expect_eq "read" "$(led .read)" 4000
	expect_ledger_exact
}

# The schedule, not its precision (that is the benchmark's): 50 Mbit/s
# for 5 s within 1 %.
test_gen_pacing() {
	setup_hosts || return
	start_sink "$V4B:5017" || return
	run_gen "$V4B:5017" --rate 50M --duration 5 || return
	wait_sink || return
	local bps=$(jq -r .bits_per_second "$T/gen.final")
	local missed=$(jq -r .missed_slots "$T/gen.final")
	local err=$(jq -n "($bps - 50000000) / 50000000 * 100 | fabs")
	echo "    achieved $bps bit/s: error $err %, $missed slots missed"
	# a stall (a busy shared machine) skips slots and says so: the rate is
	# asserted only when none was (gen's own report of it is what matters)
	if ((missed == 0)); then
		expect_eq "no slot missed: within 1 % of 50 Mbit/s" "$(jq -n "$err < 1")" true
	else
		expect_eq "missed slots reported with the shortfall" "$(jq -n "$bps < 50000000")" true
	fi
	expect_eq "every datagram read" "$(led '| .read == .sent')" true
}

# prog_ids: the ids of every loaded BPF program, sorted.
prog_ids() { bpftool prog show -j 2>/dev/null | jq -r '.[].id' | sort; }

# progs_left BEFORE: programs loaded since BEFORE (prog_ids) that are still
# there once the kernel had time to free them and that no process holds
# (other runs on this machine hold their own): what a demo left behind
# (its processes are gone: "processes left" checks that). "none" if none.
progs_left() {
	local before=$1 i id left
	for ((i = 0; i < 30; i++)); do
		left=
		for id in $(comm -13 <(echo "$before") <(prog_ids)); do
			grep -lsqE "^prog_id:[[:space:]]+$id\$" /proc/[0-9]*/fdinfo/* 2>/dev/null ||
				left+="$id "
		done
		[[ -z $left ]] && break
		sleep 0.2
	done
	echo "${left:-none}"
}

# `udpdrop demo rcvbuf` in batch mode: rcvbuf drops on the sink's socket,
# the ledger after, and nothing left behind.
test_demo_rcvbuf() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	local before=$(prog_ids)
	"$UDPDROP" demo rcvbuf -d 3 >"$T/demo.out" 2>"$T/demo.err" &
	local pid=$! rc
	wait "$pid"
	rc=$?
	expect_eq "demo exit code" "$rc" 0
	grep -q 'udpd-rx-.*/udpdrop[^ ]* .* rcvbuf' "$T/demo.out" ||
		fail "no rcvbuf row for the sink's socket: $(head -c 1500 "$T/demo.out") $(cat "$T/demo.err")"
	grep -q 'every datagram accounted for' "$T/demo.out" ||
		fail "no exact ledger: $(tail -n 25 "$T/demo.out")"
	expect_eq "namespaces left" "$(ip netns list | grep -c "^udpd-[rt]x-$pid")" 0
	expect_eq "programs left" "$(progs_left "$before")" none
	expect_eq "processes left" "$(pgrep -fc 'udpdrop (sink|gen) 10\.200\.')" 0
}

# Ctrl-C (SIGINT) in the middle of a demo: gen stops first, so every
# ledger still comes out whole; exit 0; nothing left.
test_demo_interrupt() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	# the frag ledger's drops come from reassembly timers (run.sh: the
	# kernel here has been seen to run no program for one of them; CI
	# 2026-11-26: "unexplained 1" of 200 in the frag ledger)
	TIMER_DROPS=1
	local before=$(prog_ids)
	"$UDPDROP" demo all --batch -d 60 >"$T/demo.out" 2>"$T/demo.err" &
	local pid=$! rc i
	for ((i = 0; i < 150; i++)); do
		grep -q 'drops/s' "$T/demo.out" && break
		sleep 0.1
	done
	sleep 2
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	expect_eq "demo exit code" "$rc" 0
	local whole=$(grep -c 'every datagram accounted for' "$T/demo.out")
	expect_eq "ledgers with no remainder (rcvbuf, frag, sender)" "$whole" 3
	# the evidence when one is not whole
	((whole == 3)) || grep -iE 'unexplained|ledger|run |gone|stopp' "$T/demo.out" "$T/demo.err" |
		tail -n 30 | sed 's/^/      /' >&2
	grep -q 'the sender.s side only' "$T/demo.out" ||
		fail "no sender-side ledger for noport: $(tail -n 30 "$T/demo.out")"
	expect_eq "namespaces left" "$(ip netns list | grep -c "^udpd-[rt]x-$pid")" 0
	expect_eq "programs left" "$(progs_left "$before")" none
	expect_eq "processes left" "$(pgrep -fc 'udpdrop (sink|gen) 10\.20[0-3]\.')" 0
}

# Bad input: a clear line, the documented exit code, nothing left.
test_gen_sink_bad_input() {
	setup_hosts || return
	local out rc
	expect_code() { # WANT-RC PATTERN CMD...
		local want=$1 pat=$2
		shift 2
		out=$("$@" 2>&1)
		rc=$?
		expect_eq "$* -> exit" "$rc" "$want"
		grep -q -- "$pat" <<<"$out" || fail "$*: no '$pat' in: $out"
	}
	expect_code 2 "cannot resolve" "$UDPDROP" gen nosuchhost.invalid:5000 -n 1
	expect_code 2 "port" "$UDPDROP" gen 10.0.0.1:0 -n 1
	expect_code 2 "port" "$UDPDROP" gen 10.0.0.1:65536 -n 1
	expect_code 2 "rate" "$UDPDROP" gen 10.0.0.1:5000 --rate 0
	expect_code 2 "rate" "$UDPDROP" gen 10.0.0.1:5000 --rate 5T
	expect_code 2 "65507" "$UDPDROP" gen 10.0.0.1:5000 --size 65508
	expect_code 2 "size" "$UDPDROP" gen "[fd00::1]:5000" --size 65528
	expect_code 2 "Try 'udpdrop gen --help'" "$UDPDROP" gen
	expect_code 2 "no interface" "$UDPDROP" sink 127.0.0.1:5000 --xdp nosuch0
	expect_code 2 "port" "$UDPDROP" sink 127.0.0.1:70000
	expect_code 2 "every" "$UDPDROP" sink 127.0.0.1:5000 --stall 10
	expect_code 2 "scenario" "$UDPDROP" demo nosuch
	# nobody at the other end: gen says so (and has exited: it is synchronous)
	expect_code 1 "sink" ip netns exec "$A" "$UDPDROP" gen "$V4B:5018" -n 10
	# the port is taken: exit 1, the first sink's XDP untouched
	start_sink "$V4B:5019" --xdp veth0 || return
	expect_code 1 "in use" ip netns exec "$B" "$UDPDROP" sink "$V4B:5019" --xdp veth0
	expect_eq "xdp still on veth0 (the first sink's)" \
		"$(ip -n "$B" -j link show veth0 | jq -r 'if .[0].xdp then "yes" else "no" end')" yes
	# SIGKILL: the link goes with the process, nothing stays attached
	kill -KILL "$SINK_PID"
	wait "$SINK_PID" 2>/dev/null
	expect_eq "xdp left on veth0 after SIGKILL" \
		"$(ip -n "$B" -j link show veth0 | jq -r 'if .[0].xdp then "yes" else "no" end')" no
}

# A peer on the control port that is not gen (garbage, a line far over the
# limit, a connection that says nothing) must not crash the sink or stop
# it from serving the next real run exactly.
test_sink_control_robust() {
	setup_hosts || return
	start_sink "$V4B:5021" --xdp veth0 || return
	ip netns exec "$A" bash -c "exec 3<>/dev/tcp/$V4B/5021; printf 'GET / HTTP/1.1\r\n\r\n' >&3; sleep 0.3" 2>/dev/null
	ip netns exec "$A" bash -c "exec 3<>/dev/tcp/$V4B/5021; head -c 400000 /dev/zero | tr '\\0' a >&3; sleep 0.3" 2>/dev/null
	ip netns exec "$A" bash -c "exec 3<>/dev/tcp/$V4B/5021; printf 'UDPDROP1 HELLO run=0 flows=1\n' >&3; sleep 0.3" 2>/dev/null
	kill -0 "$SINK_PID" 2>/dev/null || { fail "the sink died: $(cat "$SINK_ERR")"; return; }
	run_gen "$V4B:5021" --count 2000 --rate 20M || return
	wait_sink || return
	expect_eq "read" "$(led .read)" 2000
	expect_ledger_exact
}

# gen_bg PORT ARGS...: udpdrop gen --json in $A in the background
# ($GEN_PID), returning once it has reported its first interval (-i 0.5).
gen_bg() {
	local port=$1 i
	shift
	: >"$T/gen.json"
	ip netns exec "$A" "$UDPDROP" gen "$V4B:$port" "$@" -i 0.5 --json >"$T/gen.json" 2>"$T/gen.err" &
	GEN_PID=$!
	BG_PIDS+=("$GEN_PID")
	for ((i = 0; i < 100; i++)); do
		[[ -s $T/gen.json ]] && return 0
		kill -0 "$GEN_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "gen did not start sending: $(cat "$T/gen.err" "$SINK_ERR")"
	return 1
}

# gen killed (SIGKILL) mid-run: its counts never come. The sink's ledger
# balances what XDP saw, but sent is unknown: it must say the ledger cannot
# be checked, never "every datagram accounted for" (JSON: sent null,
# identity_checked false, sent_unknown why).
test_gen_sink_gen_killed() {
	setup_hosts || return
	start_sink "$V4B:5022" --xdp veth0 || return
	gen_bg 5022 --rate 5M --duration 60 || return
	kill -KILL "$GEN_PID"
	wait "$GEN_PID" 2>/dev/null
	wait_sink || return
	expect_eq "end" "$(jq -r .end "$T/sink.final")" "the generator left without DONE"
	expect_eq "sent" "$(led .sent)" null
	expect_eq "sender drops" "$(led .sender_drops)" null
	expect_eq "identity checked" "$(led .identity_checked)" false
	[[ $(led .sent_unknown) == *"DONE with its counts never came"* ]] ||
		fail "sent_unknown: $(led .sent_unknown)"
	expect_gt "xdp seen" "$(led .xdp_seen)" 0
	# what XDP saw is still accounted for, by XDP's side
	expect_eq "unexplained (of what XDP saw)" "$(led .unexplained)" 0

	# the same run in text: the ledger says sent is unknown, and no more
	SINK_ERR=$T/sink-text.err
	: >"$SINK_ERR"
	ip netns exec "$B" "$UDPDROP" sink "$V4B:5023" --xdp veth0 --one-off >"$T/sink.txt" 2>"$SINK_ERR" &
	SINK_PID=$!
	BG_PIDS+=("$SINK_PID")
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$SINK_ERR" && break
		sleep 0.1
	done
	gen_bg 5023 --rate 5M --duration 60 || return
	kill -KILL "$GEN_PID"
	wait "$GEN_PID" 2>/dev/null
	wait "$SINK_PID"
	expect_eq "text: sink exit code" "$?" 0
	grep -q 'every datagram accounted for' "$T/sink.txt" &&
		fail "text: the ledger claims every datagram accounted for: $(cat "$T/sink.txt")"
	grep -qE "^  sent +- +unknown: the generator's DONE with its counts never came" "$T/sink.txt" ||
		fail "text: no 'sent unknown' line: $(cat "$T/sink.txt")"
	grep -qE '^  unexplained +0 +of the datagrams XDP saw; sent is unknown: the ledger cannot be checked$' "$T/sink.txt" ||
		fail "text: no 'cannot be checked' line: $(cat "$T/sink.txt")"
}

# The sink killed (SIGKILL) or stopped (SIGINT) mid-run: gen notices on the
# control channel, stops sending, says why and exits 1; it was to send for
# 60 s, and must be done long before.
test_gen_sink_sink_gone() {
	setup_hosts || return
	local sig i want
	for sig in KILL INT; do
		start_sink "$V4B:5024" --xdp veth0 || return
		gen_bg 5024 --rate 5M --duration 60 || return
		kill -"$sig" "$SINK_PID"
		wait "$SINK_PID" 2>/dev/null
		for ((i = 0; i < 200; i++)); do
			kill -0 "$GEN_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$GEN_PID" 2>/dev/null; then
			fail "SIG$sig: gen still sends 20 s after the sink went"
			kill -KILL "$GEN_PID"
		fi
		wait "$GEN_PID"
		expect_eq "SIG$sig: gen exit code" "$?" 1
		if [[ $sig == KILL ]]; then
			want="closed the control channel (it stopped or was killed)"
		else
			want="ended the run: the sink stopped before the run's DONE"
		fi
		grep -qF "udpdrop gen: the sink at $V4B:5024 $want: stopped sending" "$T/gen.err" ||
			fail "SIG$sig: gen's line: $(cat "$T/gen.err")"
		tail -n 1 "$T/gen.json" >"$T/gen.final"
		expect_eq "SIG$sig: gen's summary, no ledger" "$(jq -r '"\(.final) \(.ledger)"' "$T/gen.final")" "true null"
		expect_eq "SIG$sig: JSON sink_gone" "$(jq -r .sink_gone "$T/gen.final")" "$want"
		# --duration 60: stopped well before (the loop above waited 20 s at most)
		awk -v s="$(jq -r .end "$T/gen.final")" 'BEGIN { exit !(s > 0 && s < 30) }' ||
			fail "SIG$sig: gen sent for $(jq -r .end "$T/gen.final") s"
		if [[ $sig == INT ]]; then
			wait_sink || return
			[[ $(led .sent_unknown) == *"the run ended at the sink (the sink was stopped) before the generator's DONE"* ]] ||
				fail "SIGINT: sent_unknown: $(led .sent_unknown)"
		fi
	done
}
