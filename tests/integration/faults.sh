# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Faults while drops happen: each long-running command stopped (SIGSTOP,
# SIGCONT) or killed (SIGKILL) in the middle of a storm, two instances on
# one storm, a traced netns destroyed and its inode reused, capabilities
# instead of root. The invariants: no program left attached, no data lost
# silently (counts exact against ss -uam and the kernel's MIB counters, or
# a stated reason such as a trace said to be cut short), never another
# netns's drops counted. Sourced by run.sh (after gensink.sh and
# record.sh: start_sink, run_gen, start_record).

# A storm: COUNT datagrams of 1000 B from $A to $B's PORT, paced over about
# two seconds, in the background; storm_wait: until it is over, the number
# sent in STORM_SENT.
storm_start() { # PORT [COUNT]
	ip netns exec "$A" "$UDPTEST" send "$V4B:$1" -c "${2:-4000}" -s 1000 --gap-us 500 >"$T/storm.sent" 2>&1 &
	STORM_PID=$!
	BG_PIDS+=("$STORM_PID")
}
storm_wait() {
	wait "$STORM_PID"
	settle
	STORM_SENT=$(awk '/^sent/ { print $2 }' "$T/storm.sent")
}

# wait_line FILE REGEX PID: until FILE has a line matching REGEX (60 s:
# the BPF load takes seconds on an emulated CPU),
# or PID exits.
wait_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	fail "no '$2' from pid $3: $(tail -c 300 "$1")"
	return 1
}

# The BPF programs a process holds (by a program or link fd).
prog_ids_held() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -u | tr '\n' ' '
}

# stop_cont PID: SIGSTOP, a second of storm without it, SIGCONT.
stop_cont() {
	kill -STOP "$1"
	sleep 1
	kill -CONT "$1"
}

# fault_expect_gone LABEL IDS: no program or link of IDS left (ids_left and
# links_left from top.sh poll for the kernel's deferred free).
fault_expect_gone() {
	[[ -n ${2// /} ]] || { fail "$1: no program ids seen while it ran"; return; }
	expect_eq "$1: programs left" "$(ids_left $2)" none
	expect_eq "$1: links left" "$(links_left $2)" none
}

# rcvbuf ground truth after a storm into a receiver that never reads:
# DROPPED (sent - still queued), SS_D (ss -uam d) and MIB_D (the delta of
# UdpRcvbufErrors since MIB0).
truth() { # PORT SENT RPID ROUT
	SS_D=$(ss_drops "$B" "$1")
	MIB_D=$(($(mib "$B" Udp RcvbufErrors) - MIB0))
	DROPPED=$(($2 - $(stop_recv "$3" "$4")))
	expect_gt "dropped" "$DROPPED" 0
	expect_eq "ss -uam d = sent - read" "$SS_D" "$DROPPED"
	expect_eq "UdpRcvbufErrors delta = sent - read" "$MIB_D" "$DROPPED"
}

# ---- SIGSTOP + SIGCONT mid-storm: the counts stay exact ----------------------

test_fault_stop_top() {
	setup_hosts || return
	start_recv "$B" "$V4B:5101" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT sent
	MIB0=$(mib "$B" Udp RcvbufErrors)
	start_top -N "$B" || return
	storm_start 5101
	sleep 0.5
	stop_cont "$TOP_PID"
	storm_wait
	sent=$STORM_SENT
	stop_top || return
	truth 5101 "$sent" "$rpid" "$rout"
	expect_eq "top: socket drops" "$(socket_field "$V4B:5101" .drops)" "$DROPPED"
	expect_eq "top: totals.drops" "$(final .totals.drops)" "$DROPPED"
	expect_eq "top: counters.UdpRcvbufErrors" "$(final ".counters[\"$(ns_inode "$B")\"].UdpRcvbufErrors")" "$MIB_D"
}

# record: the recorder stopped while its ring fills; counts exact, the
# events that did not fit shed and counted (events + shed = drops, per
# cause). Meanwhile a socket in the other netns closes with datagrams
# queued: a closing queue has no netns in the kernel, so -N cannot keep
# its events out before they are shed; its socket_close shed is counted
# and said to be any netns's (the events that fit are left out). Each CPU
# has a ring of its own: the storm's sender and the closing socket's
# process share one CPU, so the purge (an RCU callback on the CPU that
# closed it) meets the ring the storm filled.
test_fault_stop_record() {
	setup_hosts || return
	local cpu=$(($(nproc) - 1))
	start_recv "$B" "$V4B:5102" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT sent
	start_recv "$A" "$V4A:5107" --rcvbuf 65536 || return
	local other=$RECV_PID
	taskset -pc "$cpu" "$other" >/dev/null || { fail "taskset $other"; return; }
	ip netns exec "$B" "$UDPTEST" send "$V4A:5107" -c 20 -s 100 >/dev/null 2>&1
	MIB0=$(mib "$B" Udp RcvbufErrors)
	start_record "$T/s.data" -N "$B" -i 0.5 --buffer-size 4K || return
	storm_start 5102
	taskset -pc "$cpu" "$STORM_PID" >/dev/null || { fail "taskset $STORM_PID"; return; }
	sleep 0.5
	kill -STOP "$REC"
	sleep 0.5
	kill -KILL "$other" # its queue is purged while the ring is full
	wait "$other" 2>/dev/null
	sleep 0.5
	kill -CONT "$REC"
	storm_wait
	sent=$STORM_SENT
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit" "$?" 0
	truth 5102 "$sent" "$rpid" "$rout"
	"$UDPDROP" report --json "$T/s.data" >"$T/s.json" 2>"$T/s.err"
	expect_eq "report exit" "$?" 0
	expect_eq "report: socket drops" "$(jq -r ".sockets[] | select(.local == \"$V4B:5102\") | .drops" "$T/s.json")" "$DROPPED"
	expect_eq "report: reconcile rcvbuf kernel" \
		"$(jq -r --argjson ns "$(ns_inode "$B")" '.reconcile[] | select(.netns == $ns and .cause == "rcvbuf") | .kernel' "$T/s.json")" "$MIB_D"
	local ev shed close
	ev=$(jq -r .events.written "$T/s.json")
	expect_eq "record: events (its last line)" "$(grep -oE '[0-9,]+ events' "$T/rec.err" | tr -dc 0-9)" "$ev"
	expect_eq "events + shed rcvbuf = drops" "$((ev + $(jq -r '.events.shed.rcvbuf // 0' "$T/s.json")))" "$DROPPED"
	expect_eq "shed of other causes" "$(jq -r '.events.shed | del(.rcvbuf, .socket_close) | length' "$T/s.json")" 0
	close=$(jq -r '.events.shed.socket_close // 0' "$T/s.json")
	expect_gt "socket_close shed (the other netns's queue)" "$close" 0
	expect_eq "record: shed (its last line)" "$(grep -oE '\([0-9,]+ shed' "$T/rec.err" | tr -dc 0-9)" "$(jq -r .events.shed_total "$T/s.json")"
	expect_eq "record: socket_close shed said to be any netns's" \
		"$(grep -oE '[0-9,]+ of them socket_close of any netns' "$T/rec.err" | tr -dc 0-9)" "$close"
	"$UDPDROP" report "$T/s.data" >"$T/s.txt" 2>/dev/null
	grep -q "the socket_close shed may include other namespaces' events" "$T/s.txt" ||
		fail "report does not say the socket_close shed may be other namespaces': $(grep -i shed "$T/s.txt")"
}

test_fault_stop_doctor() {
	setup_hosts || return
	start_recv "$B" "$V4B:5103" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT sent
	MIB0=$(mib "$B" Udp RcvbufErrors)
	start_doctor -N "$B" -d 6 || return
	storm_start 5103
	sleep 0.5
	stop_cont "$DOC_PID"
	storm_wait
	sent=$STORM_SENT
	wait_doctor || return
	truth 5103 "$sent" "$rpid" "$rout"
	expect_eq "doctor: rcvbuf finding" \
		"$(dq '[.findings[] | select(.cause == "rcvbuf")][0] | "\(.local) \(.drops)"')" "$V4B:5103 $DROPPED"
}

# record -- COMMAND: record stopped alone (the command runs on).
test_fault_stop_record_command() {
	setup_hosts || return
	local sent cmd
	MIB0=$(mib "$B" Udp RcvbufErrors)
	"$UDPDROP" record -o "$T/c.data" -i 0.5 -- \
		ip netns exec "$B" "$UDPTEST" recv "$V4B:5104" --rcvbuf 4096 >"$T/cmd.out" 2>"$T/rec.err" &
	REC=$!
	BG_PIDS+=("$REC")
	wait_line "$T/rec.err" 'recording UDP drops' "$REC" || return
	wait_line "$T/cmd.out" ready "$REC" || return
	cmd=$(pgrep -P "$REC" | head -1)
	storm_start 5104
	sleep 0.5
	stop_cont "$REC"
	storm_wait
	sent=$STORM_SENT
	SS_D=$(ss_drops "$B" 5104)
	kill -USR1 "$cmd" # the command drains, says what it read, exits 0
	wait "$REC"
	expect_eq "record exit (the command's)" "$?" 0
	DROPPED=$((sent - $(awk '/^received/ { print $2 }' "$T/cmd.out")))
	expect_gt "dropped" "$DROPPED" 0
	expect_eq "ss -uam d = sent - read" "$SS_D" "$DROPPED"
	"$UDPDROP" report --json "$T/c.data" >"$T/c.json" 2>/dev/null
	expect_eq "report: socket drops" "$(jq -r ".sockets[] | select(.local == \"$V4B:5104\") | .drops" "$T/c.json")" "$DROPPED"
}

# sink stopped: its socket drops what arrives meanwhile; the ledger says
# so to the datagram. gen stopped: its missed slots are skipped and
# counted; the sink's ledger stays exact.
fault_stop_gensink() { # WHO (sink or gen)
	setup_hosts || return
	start_sink "$V4B:5105" --rcvbuf 16K --xdp veth0 || return
	ip netns exec "$A" "$UDPDROP" gen "$V4B:5105" -t 3 --pps 2000 -l 1000 --json >"$T/gen.json" 2>"$T/gen.err" &
	local gen=$! base i
	BG_PIDS+=("$gen")
	# stop it mid-stream: once datagrams flow (gen loads its tracer and
	# waits for the sink's READY first, which on a busy machine can take
	# longer than any fixed sleep: a stop before the stream proves nothing)
	base=$(mib "$B" Udp InDatagrams)
	for ((i = 0; i < 200; i++)); do
		(($(mib "$B" Udp InDatagrams) - base >= 200)) && break
		sleep 0.05
	done
	if [[ $1 == sink ]]; then stop_cont "$SINK_PID"; else stop_cont "$gen"; fi
	wait "$gen"
	expect_eq "gen exit" "$?" 0
	tail -n 1 "$T/gen.json" >"$T/gen.final"
	wait_sink || return
	expect_ledger_exact
	if [[ $1 == sink ]]; then
		expect_gt "receiver kernel drops (the sink was stopped)" "$(led .receiver_drops)" 0
	else
		expect_gt "gen: missed slots" "$(jq -r '[.. | .missed_slots? // empty] | add' "$T/gen.final")" 0
	fi
}
test_fault_stop_sink() { fault_stop_gensink sink; }
test_fault_stop_gen() { fault_stop_gensink gen; }

# ---- SIGKILL mid-storm: nothing left attached --------------------------------

test_fault_kill() {
	setup_hosts || return
	start_recv "$B" "$V4B:5106" --rcvbuf 4096 || return
	local pid ids who child
	for who in top record doctor; do
		# a file each: the one before may still hold a ready line when
		# wait_line first reads, before the new process truncates it
		case $who in
		top) "$UDPDROP" top -b -i 0.3 -N "$B" >/dev/null 2>"$T/k-$who.err" & ;;
		record) "$UDPDROP" record -o "$T/k.data" -i 0.3 -N "$B" 2>"$T/k-$who.err" & ;;
		doctor) "$UDPDROP" doctor -d 30 -N "$B" >/dev/null 2>"$T/k-$who.err" & ;;
		esac
		pid=$!
		BG_PIDS+=("$pid")
		wait_line "$T/k-$who.err" 'tracing|recording|sampling' "$pid" || continue
		ids=$(prog_ids_held "$pid")
		storm_start 5106 2000
		sleep 0.6
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		fault_expect_gone "$who SIGKILL" "$ids"
		storm_wait
	done
	# what the killed recorder wrote reads as a trace cut short
	"$UDPDROP" report --json "$T/k.data" >"$T/k.json" 2>"$T/k.rep.err"
	expect_eq "report of a killed recording: exit" "$?" 0
	expect_eq "report of a killed recording: file.complete" "$(jq -r .file.complete "$T/k.json")" false
	[[ -s $T/k.rep.err ]] || fail "report of a killed recording does not say it is cut short"

	# record -- COMMAND killed: the command runs on, holding nothing of
	# udpdrop's (no BPF fd inherited), and nothing stays attached
	"$UDPDROP" record -o "$T/kc.data" -- ip netns exec "$B" "$UDPTEST" recv "$V4B:5107" --rcvbuf 4096 \
		>"$T/kc.out" 2>"$T/k.err" &
	pid=$!
	BG_PIDS+=("$pid")
	wait_line "$T/k.err" 'recording UDP drops' "$pid" || return
	wait_line "$T/kc.out" ready "$pid" || return
	child=$(pgrep -P "$pid" | head -1)
	BG_PIDS+=("$child")
	ids=$(prog_ids_held "$pid")
	storm_start 5107 2000
	sleep 0.6
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	if kill -0 "$child" 2>/dev/null; then
		expect_eq "record -- CMD SIGKILL: BPF fds the command holds" \
			"$(ls -l /proc/"$child"/fd 2>/dev/null | grep -c 'anon_inode:bpf')" 0
	fi
	fault_expect_gone "record -- CMD SIGKILL (the command still running)" "$ids"
	storm_wait
	kill -KILL "$child" 2>/dev/null
}

# sink (with XDP) killed: XDP detached with the rest, and gen ends its run
# by itself with a line and exit 1 (no sink answered). gen killed: its
# tracer gone; the sink closes the run by itself and can be stopped.
test_fault_kill_gensink() {
	setup_hosts || return
	local gen ids i
	start_sink "$V4B:5108" --xdp veth0 || return
	ids=$(prog_ids_held "$SINK_PID")
	ip netns exec "$A" "$UDPDROP" gen "$V4B:5108" -t 3 --pps 2000 >/dev/null 2>"$T/gen.err" &
	gen=$!
	BG_PIDS+=("$gen")
	sleep 1
	kill -KILL "$SINK_PID"
	wait "$SINK_PID" 2>/dev/null
	fault_expect_gone "sink SIGKILL" "$ids"
	ip -n "$B" -d link show veth0 | grep -q 'prog/xdp' && fail "sink SIGKILL: XDP still attached to veth0"
	for ((i = 0; i < 150; i++)); do
		kill -0 "$gen" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$gen" 2>/dev/null; then
		fail "gen still running 15 s after its sink was killed (a 3 s run)"
	else
		wait "$gen"
		expect_eq "gen exit after its sink was killed" "$?" 1
		[[ -s $T/gen.err ]] || fail "gen says nothing about its sink"
	fi

	start_sink "$V4B:5109" || return
	ip netns exec "$A" "$UDPDROP" gen "$V4B:5109" -t 5 --pps 2000 >/dev/null 2>"$T/gen.err" &
	gen=$!
	BG_PIDS+=("$gen")
	wait_line "$T/sink.json" '"final":false' "$SINK_PID" || return
	ids=$(prog_ids_held "$gen")
	kill -KILL "$gen"
	wait "$gen" 2>/dev/null
	fault_expect_gone "gen SIGKILL" "$ids"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$SINK_PID" 2>/dev/null || break
		grep -q '"final":true' "$T/sink.json" && break
		sleep 0.1
	done
	grep -q '"final":true' "$T/sink.json" ||
		fail "sink: no end of run within 10 s of its generator's SIGKILL: $(tail -c 300 "$SINK_ERR")"
	kill -INT "$SINK_PID" 2>/dev/null
	wait "$SINK_PID"
	expect_eq "sink exit" "$?" 0
}

# ---- two instances at once -----------------------------------------------------

test_fault_two_tops() {
	setup_hosts || return
	start_recv "$B" "$V4B:5110" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT sent p1 p2
	MIB0=$(mib "$B" Udp RcvbufErrors)
	"$UDPDROP" top --json -i 0.5 -N "$B" >"$T/t1.json" 2>"$T/t1.err" &
	p1=$!
	"$UDPDROP" top --json -i 0.3 -N "$B" >"$T/t2.json" 2>"$T/t2.err" &
	p2=$!
	BG_PIDS+=("$p1" "$p2")
	wait_line "$T/t1.err" tracing "$p1" && wait_line "$T/t2.err" tracing "$p2" || return
	storm_start 5110
	storm_wait
	sent=$STORM_SENT
	kill -INT "$p1" "$p2"
	wait "$p1"
	expect_eq "first top exit" "$?" 0
	wait "$p2"
	expect_eq "second top exit" "$?" 0
	truth 5110 "$sent" "$rpid" "$rout"
	local f
	for f in t1 t2; do
		expect_eq "$f: socket drops" \
			"$(tail -n 1 "$T/$f.json" | jq -r ".sockets[] | select(.local == \"$V4B:5110\") | .drops")" "$DROPPED"
	done
}

# ---- a traced netns destroyed, its inode reused --------------------------------

# udpdrop CMD -N X: X's drops counted; then X is destroyed. udpdrop says
# in a line that X is gone and stops with exit 0; the netns that gets X's
# inode next is never counted as X.
fault_netns_gone() { # top|record
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	local X=udt-$$-x ino pid sent got i n ns reused= err=$T/ng.err
	ip netns add "$X" && EXTRA_NETNS+=("$X") && ip -n "$X" link set lo up || { fail "netns $X"; return; }
	ino=$(ns_inode "$X")
	start_recv "$X" 127.0.0.1:5111 --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	if [[ $1 == top ]]; then
		"$UDPDROP" top --json -i 0.3 -N "$X" >"$T/ng.json" 2>"$err" &
	else
		"$UDPDROP" record -o "$T/ng.data" -i 0.3 -N "$X" 2>"$err" &
	fi
	pid=$!
	BG_PIDS+=("$pid")
	wait_line "$err" 'tracing|recording' "$pid" || return
	sent=$(send "$X" 127.0.0.1:5111 -c 300 -s 1000)
	settle
	got=$(stop_recv "$rpid" "$rout")
	kill -KILL "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	local dropped=$((sent - got))
	expect_gt "dropped in $X" "$dropped" 0
	ip netns del "$X"
	# its inode, for the next netns the kernel makes (lowest free number;
	# others' namespaces come and go, so make a few and keep the one)
	for ((i = 0; i < 40; i++)); do
		[[ -n $reused ]] && break
		ns=udt-$$-r$i
		ip netns add "$ns" || break
		EXTRA_NETNS+=("$ns")
		if [[ $(ns_inode "$ns") == "$ino" ]]; then
			reused=$ns
		else
			sleep 0.1
		fi
	done
	if [[ -n $reused ]]; then
		ip -n "$reused" link set lo up
		start_recv "$reused" 127.0.0.1:5111 --rcvbuf 4096 || return
		send "$reused" 127.0.0.1:5111 -c 300 -s 1000 >/dev/null
		settle
		echo "    (netns $reused has $X's inode $ino, and drops)"
	else
		echo "    (no new netns got inode $ino in 40 tries: the reuse half did not run)"
	fi
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$1 -N $X: still running 10 s after $X was destroyed"
		kill -INT "$pid"
	fi
	wait "$pid"
	expect_eq "$1 -N $X: exit after $X was destroyed" "$?" 0
	grep -qE -- "($X|$ino)" "$err" || fail "$1: no line names $X (or $ino) as gone: $(cat "$err")"
	if [[ $1 == top ]]; then
		expect_eq "top: totals.drops ($X's only)" "$(tail -n 1 "$T/ng.json" | jq -r .totals.drops)" "$dropped"
	else
		"$UDPDROP" report --json "$T/ng.data" >"$T/ng.rep" 2>/dev/null
		expect_eq "record: report exit" "$?" 0
		expect_eq "record: totals.drops ($X's only)" "$(jq -r .totals.drops "$T/ng.rep")" "$dropped"
	fi
}
test_fault_netns_gone_top() { fault_netns_gone top; }
test_fault_netns_gone_record() { fault_netns_gone record; }

# ---- capabilities instead of root ------------------------------------------------

# CAP_BPF + CAP_PERFMON + CAP_NET_ADMIN as nobody: the drops are counted
# exactly (in the kernel); what needs more (other namespaces' counters and
# sockets need CAP_SYS_ADMIN) is said once, in one line each.
test_fault_caps() {
	id nobody >/dev/null 2>&1 || { echo "    skip: no user nobody"; return; }
	setup_hosts || return
	chmod 0777 "$T"
	local caps=+bpf,+perfmon,+net_admin who sent rpid rout err
	local -a as=(setpriv --reuid=nobody --regid=nogroup --clear-groups
		--inh-caps=-all,$caps --ambient-caps=-all,$caps --bounding-set=-all,$caps)
	for who in top record doctor; do
		start_recv "$B" "$V4B:5112" --rcvbuf 4096 || return
		rpid=$RECV_PID rout=$RECV_OUT err=$T/cap-$who.err
		MIB0=$(mib "$B" Udp RcvbufErrors)
		case $who in
		top) "${as[@]}" "$UDPDROP" top --json -i 0.3 --port 5112 >"$T/cap-top.json" 2>"$err" & ;;
		record) "${as[@]}" "$UDPDROP" record -o "$T/cap.data" -i 0.3 --port 5112 2>"$err" & ;;
		doctor) "${as[@]}" "$UDPDROP" doctor --json -d 3 >"$T/cap-doctor.json" 2>"$err" & ;;
		esac
		local pid=$!
		BG_PIDS+=("$pid")
		wait_line "$err" 'tracing|recording|sampling' "$pid" || continue
		local ids=$(prog_ids_held "$pid")
		sent=$(send "$A" "$V4B:5112" -c 300 -s 1000)
		settle
		[[ $who != doctor ]] && kill -INT "$pid"
		wait "$pid"
		expect_eq "$who with capabilities: exit" "$?" 0
		truth 5112 "$sent" "$rpid" "$rout"
		# the socket may go unnamed (its netns is out of reach), never uncounted
		local ns=$(ns_inode "$B") sel
		sel=".sockets | map(select(.netns == $ns) | .drops) | add"
		case $who in
		top) tail -n 1 "$T/cap-top.json" >"$T/cap.json" ;;
		record) "$UDPDROP" report --json "$T/cap.data" >"$T/cap.json" 2>/dev/null ;;
		esac
		if [[ $who == doctor ]]; then
			expect_eq "doctor: mode" "$(jq -r .mode "$T/cap-doctor.json")" bpf
			expect_eq "doctor: a rcvbuf finding with B's drops" \
				"$(jq -r --argjson d "$DROPPED" 'any(.findings[]; .cause == "rcvbuf" and .drops == $d)' "$T/cap-doctor.json")" true
		else
			expect_eq "$who: B's socket drops" "$(jq -r "$sel" "$T/cap.json")" "$DROPPED"
			expect_eq "$who: totals.drops (--port)" "$(jq -r .totals.drops "$T/cap.json")" "$DROPPED"
		fi
		# B's counters are out of reach without CAP_SYS_ADMIN: said once
		grep -q CAP_SYS_ADMIN "$err" || fail "$who: no line says what needs CAP_SYS_ADMIN: $(cat "$err")"
		local dup
		dup=$(tr '0-9' '#' <"$err" | sort | uniq -d | head -1)
		[[ -z $dup ]] || fail "$who: a line said more than once: $dup"
		LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$err" && fail "$who: control characters on stderr"
		fault_expect_gone "$who with capabilities" "$ids"
	done
}
