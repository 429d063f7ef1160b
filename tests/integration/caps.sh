# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of udpdrop with the capabilities that suffice to trace
# (CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN) instead of root: as uid 0 with
# only those, and as an unprivileged uid with them as ambient capabilities.
# What they leave out is said once on stderr and listed in JSON; what can
# be had another way (the close-time cause, sink --xdp) is had. Sourced
# by run.sh.

CAPS_TRACE=-all,+bpf,+perfmon,+net_admin

# caps_wrap MODE [CAPS]: the command prefix that runs udpdrop so.
caps_wrap() {
	local c=${2:-$CAPS_TRACE}
	case $1 in
	root) echo "setpriv --inh-caps=$c --ambient-caps=$c --bounding-set=$c --" ;;
	nobody) echo "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=$c --ambient-caps=$c --" ;;
	esac
}

# Does /proc/kallsyms show addresses to this MODE? (kptr_restrict and
# perf_event_paranoid decide; CAP_SYSLOG is not in CAPS_TRACE)
caps_kallsyms_hidden() {
	$(caps_wrap "$1") head -n 1 /proc/kallsyms | grep -q '^0\+ '
}

# The owners part's needs: a uid other than 0 cannot even list another
# user's /proc/PID/fd.
caps_owner_needs() {
	if [[ $1 == root ]]; then echo CAP_SYS_PTRACE; else echo "CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH"; fi
}

# top over all namespaces: a receiver in B dropping (rcvbuf) and one
# killed with datagrams queued (socket_close, freed with no reason and no
# netns: the cause comes from the drop location, which without kallsyms
# addresses the kernel itself resolves by BTF).
test_caps_top() {
	setup_hosts || return
	local mode ns
	ns=$(ns_inode "$B")
	for mode in root nobody; do
		start_recv "$B" "$V4B:5050" --rcvbuf 4096 || return
		local rpid=$RECV_PID rout=$RECV_OUT
		start_recv "$B" "$V4B:5051" --rcvbuf 1000000 || return
		local cpid=$RECV_PID
		UDPDROP_WRAP=$(caps_wrap "$mode") start_top || return
		local sent=$(send "$A" "$V4B:5050" -c 300 -s 1000)
		send "$A" "$V4B:5051" -c 25 -s 200 >/dev/null
		settle
		{ kill -KILL "$cpid"; wait "$cpid"; } 2>/dev/null
		# the queue is purged from an RCU callback, later on a loaded
		# machine (the ASan run: 1 s was not always enough): until top
		# has counted it, 20 s at most (lifetimes.sh)
		wait_close_drops 25
		stop_top || return
		local got=$(stop_recv "$rpid" "$rout")
		expect_eq "$mode: sent" "$sent" 300
		expect_eq "$mode: rcvbuf drops of B's socket" \
			"$(final --argjson n "$ns" '[.sockets[] | select(.netns == $n) | .causes.rcvbuf // 0] | add')" "$((sent - got))"
		# on its socket (its deliveries said where it lived), or, where
		# the socket cannot be named, on its flow: never cause other
		expect_eq "$mode: the closed socket's queue: cause socket_close, not other" \
			"$(final '[(.sockets[] | select(.local // "" | test(":5051$")) | .causes | to_entries[] | "\(.key)=\(.value)"), (.unattributed[] | select(.flow | test(":5051$")) | "\(.cause)=\(.drops)")] | join(",")')" socket_close=25
		# each part left out: one line on stderr, one entry in JSON
		local want="netns:CAP_SYS_ADMIN,owners:$(caps_owner_needs "$mode")"
		if caps_kallsyms_hidden "$mode"; then
			want="symbols:CAP_SYSLOG,$want"
			expect_eq "$mode: the symbols line" \
				"$(grep -c '^udpdrop: without CAP_SYSLOG /proc/kallsyms hides kernel addresses .*: drop locations show as addresses, not function names (causes are not affected); run as root' "$TOP_ERR")" 1
		fi
		expect_eq "$mode: the netns line" \
			"$(grep -c '^udpdrop: without CAP_SYS_ADMIN other network namespaces cannot be entered: .*; run as root$' "$TOP_ERR")" 1
		expect_eq "$mode: the owners line" \
			"$(grep -c "^udpdrop: without $(caps_owner_needs "$mode") the /proc/PID/fd of other users' processes .*: their sockets show no owner (PID/COMM); run as root$" "$TOP_ERR")" 1
		expect_eq "$mode: JSON unavailable" "$(final '[.unavailable[] | "\(.part):\(.needs)"] | join(",")')" "$want"
		expect_eq "$mode: every entry says what is lost" "$(final '[.unavailable[] | .lost | length > 10] | all')" true
	done

	# -N another netns: that one is named, its counters are not reconciled
	start_recv "$B" "$V4B:5052" --rcvbuf 4096 || return
	UDPDROP_WRAP=$(caps_wrap root) start_top -N "$B" || return
	send "$A" "$V4B:5052" -c 100 -s 1000 >/dev/null
	settle
	stop_top || return
	expect_eq "-N: the netns line names it" \
		"$(grep -c "^udpdrop: without CAP_SYS_ADMIN netns $B cannot be entered: its sockets show ? for addresses and no owner, .*kernel counters (the reconciliation) and sysctls are missing; run as root$" "$TOP_ERR")" 1
	expect_eq "-N: netns unavailable in JSON" "$(final '[.unavailable[] | select(.part == "netns")] | length')" 1
	expect_eq "-N: no reconciliation (it could not be read)" "$(final '.reconcile | length')" 0

	# as root: nothing is left out, nothing said
	start_top -N "$B" || return
	stop_top || return
	expect_eq "root: JSON unavailable" "$(final '.unavailable | length')" 0
	expect_eq "root: no 'without CAP_' line" "$(grep -c 'without CAP_' "$TOP_ERR")" 0
}

# record and doctor say the same, in META and in doctor's JSON.
test_caps_record_doctor() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	local mode=nobody want
	chmod 0777 "$T" # the recording is written by uid 65534
	want="netns:CAP_SYS_ADMIN,owners:$(caps_owner_needs "$mode")"
	caps_kallsyms_hidden "$mode" && want="symbols:CAP_SYSLOG,$want"
	start_recv "$B" "$V4B:5053" --rcvbuf 1000000 || return
	local cpid=$RECV_PID
	UDPDROP_WRAP=$(caps_wrap "$mode") start_record "$T/caps.data" -d 3 -i 0.5 || return
	local rec=$REC
	send "$A" "$V4B:5053" -c 25 -s 200 >/dev/null
	settle
	{ kill -KILL "$cpid"; wait "$cpid"; } 2>/dev/null
	wait "$rec"
	expect_eq "record exit code" "$?" 0
	expect_eq "record: the netns line" "$(grep -c '^udpdrop record: without CAP_SYS_ADMIN other network namespaces' "$T/rec.err")" 1
	expect_eq "record: the owners line" "$(grep -c '^udpdrop record: without CAP_SYS_PTRACE' "$T/rec.err")" 1
	tc_records "$T/caps.data"
	expect_eq "META unavailable" "$(tq '.[0].meta.unavailable')" "$want"
	expect_eq "report: the closed socket's queue is socket_close" \
		"$("$UDPDROP" report --json "$T/caps.data" | jq -r '[(.sockets[] | select(.local // "" | test(":5053$")) | .causes | to_entries[] | "\(.key)=\(.value)"), (.unattributed[] | select(.dport == 5053) | "\(.cause)=\(.drops)")] | join(",")')" socket_close=25

	# doctor -N B: counters of B cannot be read; said, and in JSON
	start_recv "$B" "$V4B:5054" --rcvbuf 4096 || return
	$(caps_wrap root) "$UDPDROP" doctor -N "$B" -d 1 --json >"$T/doc.json" 2>"$T/doc.err"
	expect_eq "doctor exit code" "$?" 0
	expect_eq "doctor: the netns line" \
		"$(grep -c "^udpdrop doctor: without CAP_SYS_ADMIN netns $B cannot be entered" "$T/doc.err")" 1
	expect_eq "doctor: JSON unavailable" "$(jq -r '[.unavailable[] | .part] | join(",")' "$T/doc.json")" netns,owners
	"$UDPDROP" doctor -N "$B" -d 1 --json >"$T/doc.json" 2>"$T/doc.err"
	expect_eq "doctor as root: JSON unavailable" "$(jq -r '.unavailable | length' "$T/doc.json")" 0
}

# sink --xdp with the capabilities XDP needs, as an unprivileged uid: the
# run's ledger is exact. Without CAP_PERFMON: exit 3, naming it.
test_caps_sink_xdp() {
	setup_hosts || return
	SINK_OUT=$T/sink.json SINK_ERR=$T/sink.err
	: >"$SINK_ERR"
	ip netns exec "$B" $(caps_wrap nobody) "$UDPDROP" sink "$V4B:5055" --xdp veth0 --one-off --json \
		>"$SINK_OUT" 2>"$SINK_ERR" &
	SINK_PID=$!
	BG_PIDS+=("$SINK_PID")
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$SINK_ERR" && break
		kill -0 "$SINK_PID" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'listening on .*XDP on veth0.*tracing drops' "$SINK_ERR" ||
		{ fail "sink --xdp with CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN did not start with XDP and the tracer: $(cat "$SINK_ERR")"; return; }
	run_gen "$V4B:5055" --count 2000 --rate 20M || return
	wait_sink || return
	expect_eq "xdp seen" "$(led .xdp_seen)" 2000
	expect_eq "measured" "$(led '.measured | [.sent, .sender, .xdp, .tracer] | all')" true
	expect_ledger_exact

	local out rc
	out=$(ip netns exec "$B" $(caps_wrap nobody -all,+bpf,+net_admin) "$UDPDROP" sink "$V4B:5056" --xdp veth0 --one-off 2>&1)
	rc=$?
	expect_eq "without CAP_PERFMON: exit" "$rc" 3
	grep -q "permission denied: --xdp .* needs CAP_BPF, CAP_PERFMON (or CAP_SYS_ADMIN for both) and CAP_NET_ADMIN" <<<"$out" ||
		fail "without CAP_PERFMON: $out"
	expect_eq "xdp left on veth0" \
		"$(ip -n "$B" -j link show veth0 | jq -r 'if .[0].xdp then "yes" else "no" end')" no
}

# -p a process of root's (full capabilities) with only the tracing ones:
# a privilege problem (exit 3, naming CAP_SYS_PTRACE), not a failure, and
# no file left by record.
test_caps_pid() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	chmod 0777 "$T"
	sleep 300 &
	local p=$! mode out rc
	BG_PIDS+=("$p")
	for mode in root nobody; do
		out=$($(caps_wrap "$mode") "$UDPDROP" top -b -n 1 -p "$p" 2>&1)
		rc=$?
		expect_eq "$mode: top -p: exit" "$rc" 3
		[[ $out == "udpdrop top: permission denied: process $p is another user's or has more capabilities: reading its netns needs CAP_SYS_PTRACE; run as root" ]] ||
			fail "$mode: top -p: '$out'"
		out=$(cd "$T" && $(caps_wrap "$mode") "$UDPDROP" record -o "$T/p.data" -p "$p" 2>&1)
		rc=$?
		expect_eq "$mode: record -p: exit" "$rc" 3
		[[ $out == *"needs CAP_SYS_PTRACE"* ]] || fail "$mode: record -p: '$out'"
		[[ -e $T/p.data ]] && fail "$mode: record -p left a file"
	done
}
