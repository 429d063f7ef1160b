# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sockets that come and go while udpdrop runs: the kernel's tables give
# closed sockets' entries back (attribution stays whole on a long run), and
# a socket udpdrop never dumped keeps the drops of its purged queue at
# close. Sourced by run.sh.

# port_field PORT FIELD: a field of the socket row on local port PORT
# (bound to an address or not: a socket never dumped shows as *:PORT).
port_field() {
	final --arg p ":$1" "[.sockets[] | select(.local | endswith(\$p))] | if length == 0 then \"none\" else .[0]$2 end"
}

# wait_close_drops N: until top's latest line counts N socket_close drops
# (the kernel purges a closed socket's queue from an RCU callback, which a
# busy or lazy-RCU kernel may run seconds later), at most 20 s.
wait_close_drops() {
	local i n
	for ((i = 0; i < 200; i++)); do
		n=$(tail -n 1 "$TOP_OUT" | jq -r '.totals.causes.socket_close // 0' 2>/dev/null)
		[[ $n =~ ^[0-9]+$ ]] && ((n >= $1)) && return 0
		sleep 0.1
	done
	return 0 # the assertions that follow say what came
}

# A socket born after udpdrop started, holding 10 unread datagrams, killed
# before any dump of its netns could see it: the 10 socket_close drops are
# its own in every mode (the kernel reports them with no socket and no
# netns; its deliveries said where it lived).
close_unseen_case() { # ARGS for start_top; $1: the port
	local port=$1 rpid
	shift
	start_top "$@" || return
	start_recv "$B" "$V4B:$port" --rcvbuf 1000000 || return
	rpid=$RECV_PID
	expect_eq sent "$(send "$A" "$V4B:$port" -c 10 -s 200)" 10
	settle
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	wait_close_drops 10
	stop_top || return
	expect_eq "socket_close drops of the socket" \
		"$(port_field "$port" .causes.socket_close)" 10
	expect_eq "its netns" "$(port_field "$port" .netns)" "$(ns_inode "$B")"
	expect_eq "totals: socket_close" "$(final '.totals.causes.socket_close')" 10
	expect_eq "nothing of unknown netns" "$(final '.totals.netns_unknown')" 0
	expect_eq "rows on its port" \
		"$(final --arg p ":$port" '[.sockets[] | select(.local | endswith($p))] | length')" 1
}

test_close_unseen_socket_netns() {
	setup_hosts || return
	close_unseen_case 5061 -N "$B"
}

test_close_unseen_socket_netns_all() {
	setup_hosts || return
	close_unseen_case 5062 -N "$B" -a
}

# no netns filter (others may be tracing on this machine: --port keeps
# this test's drops apart)
test_close_unseen_socket_port() {
	setup_hosts || return
	close_unseen_case 5063 --port 5063
}

test_close_unseen_socket_record() {
	setup_hosts || return
	local rpid
	start_record "$T/close.data" -N "$B" -i 0.3 || return
	start_recv "$B" "$V4B:5064" --rcvbuf 1000000 || return
	rpid=$RECV_PID
	expect_eq sent "$(send "$A" "$V4B:5064" -c 10 -s 200)" 10
	settle
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	# until a snapshot in the file has the purge (see wait_close_drops)
	local i n
	for ((i = 0; i < 200; i++)); do
		n=$("$TRACECAT" "$T/close.data" 2>/dev/null | jq -s '[.[] | select(.type == "COUNTS")] | last | [.counts[]? | select(.flags / 256 | floor % 2 == 1) | .datagrams] | add // 0' 2>/dev/null)
		[[ $n =~ ^[0-9]+$ ]] && ((n >= 10)) && break
		sleep 0.1
	done
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit" $? 0
	"$UDPDROP" report --json "$T/close.data" >"$T/report.json" 2>"$T/report.err" ||
		{ fail "report: $(cat "$T/report.err")"; return; }
	expect_eq "report: socket_close of the socket" \
		"$(jq -r '[.sockets[] | select(.local | endswith(":5064"))][0].causes.socket_close' "$T/report.json")" 10
	expect_eq "report: totals socket_close" \
		"$(jq -r '.totals.causes.socket_close.drops' "$T/report.json")" 10
}

# Sockets come and go at 100 a second, each with 4 datagrams its filter
# drops and 1 left queued at close, far more sockets than the tables hold
# (--map-entries 256): every drop stays on its own socket because closed
# sockets' entries are given back; totals stay exact.
test_churn_keeps_attribution() {
	setup_hosts || return
	local n=1200 out
	# a row of its own for each closed socket, all 1200: past the
	# closed-row cap (512) they would fold (test_closed_sockets_fold_early)
	UDPDROP_CLOSED_ROWS_MAX=100000 start_top -N "$B" --map-entries 256 || return
	out=$(ip netns exec "$B" "$UDPTEST" churn 127.0.0.1:0 -n $n --rate 100 --drops 4 --queued 1)
	wait_close_drops $n
	stop_top || return
	expect_eq "sockets made" "$(awk '/^churned/ { print $2 }' <<<"$out")" $n
	local filt=$(final '.totals.causes.socket_filter')
	local close=$(final '.totals.causes.socket_close // 0')
	# ground truth: each socket's filter rejected exactly 4
	expect_eq "socket_filter drops" "$filt" $((n * 4))
	expect_eq "attributed = drops" "$(final .totals.attributed)" "$(final .totals.drops)"
	expect_eq "drops = socket_filter + socket_close" "$(final .totals.drops)" $((filt + close))
	expect_eq "overflow" "$(final .totals.overflow)" 0
	expect_eq "deliveries lost to a full table" "$(final .totals.rx_overflow)" 0
	# the queued datagram of each (churn saw it queued before closing):
	# the kernel keeps no counter of these, and has been seen to free a
	# few of thousands without a kfree_skb event: at least 99 %. (Two
	# sockets that had the same ephemeral port within one interval can
	# swap theirs: the purge names only the port.)
	expect_gt "socket_close (at least 99 % of $n)" "$close" $((n * 99 / 100 - 1))
	if ((close > n)); then
		fail "more socket_close drops ($close) than sockets ($n)"
	fi
	local own=$(final '[.sockets[] | select(.causes.socket_filter == 4)] | length')
	expect_eq "every socket a row of its own" "$own" $n
	if [[ $own != "$n" ]]; then
		echo "    the rows without 4 socket_filter drops:"
		final -c '.sockets[] | select(.causes.socket_filter != 4) | {local, cookie, inode, alive, attribution, drops, causes, locations}' | sed 's/^/      /'
	fi
	expect_gt "entries given back" "$(final '.tables.given_back')" $n
	# the interval lines list what moved in them, not every socket seen
	local biggest=$(jq -c 'select(.final == false) | .sockets | length' "$TOP_OUT" | sort -n | tail -1)
	if ((biggest >= n / 2)); then
		fail "an interval line listed $biggest sockets (want those of the interval)"
	fi
}

# --map-entries costs kernel memory, charged to udpdrop's cgroup: in a
# cgroup limited to 64 MiB, a table that would take ~496 MiB is refused
# (exit 2, one line saying what fits) and nothing is loaded; a large one
# that fits says what it costs.
test_map_entries_memory() {
	local cg v2=0 rc
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]] &&
		grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
		cg=/sys/fs/cgroup/udt-$$ v2=1
	elif [[ -d /sys/fs/cgroup/memory ]]; then
		cg=/sys/fs/cgroup/memory/udt-$$
	else
		fail "no cgroup memory controller (v2 or v1) to limit udpdrop with"
		return
	fi
	mkdir "$cg" || { fail "mkdir $cg"; return; }
	if ((v2)); then
		echo $((64 << 20)) >"$cg/memory.max"
	else
		echo $((64 << 20)) >"$cg/memory.limit_in_bytes"
	fi
	local before=$(bpftool prog show 2>/dev/null | grep -c udpdrop_kfree)
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" top --map-entries 1048576 -n 1' \
		sh "$cg" "$UDPDROP" >"$T/out" 2>"$T/err"
	rc=$?
	rmdir "$cg"
	expect_eq "exit code" "$rc" 2
	expect_eq "one line and the hint" "$(wc -l <"$T/err")" 2
	grep -q "cgroup's memory limit leaves: give at most" "$T/err" ||
		fail "no word of the limit: $(cat "$T/err")"
	expect_eq "nothing printed" "$(wc -c <"$T/out")" 0
	expect_eq "no program left" "$(bpftool prog show 2>/dev/null | grep -c udpdrop_kfree)" "$before"
	# a table of 1,048,576 entries (~496 MiB on 2 CPUs) where it fits:
	# one line with the cost
	"$UDPDROP" top --map-entries 1048576 --port 9 -b -i 0.2 -n 1 >"$T/out" 2>"$T/err"
	expect_eq "large table: exit code" $? 0
	grep -q 'the tables take ~.* of kernel memory' "$T/err" ||
		fail "the cost not said: $(cat "$T/err")"
}

# top started and stopped in the middle of a storm: the kernel's counters
# and udpdrop's maps cannot be read at one instant, so the counters are
# read just before and just after the maps; the reconciliation is exact to
# within how far they moved meanwhile, and says so instead of "differ".
test_reconcile_mid_storm() {
	setup_hosts || return
	start_recv "$B" "$V4B:5065" --rcvbuf 4096 || return
	ip netns exec "$A" "$UDPTEST" send "$V4B:5065" -c 100000000 -s 64 >/dev/null &
	local storm=$!
	BG_PIDS+=("$storm")
	sleep 0.5
	start_top -N "$B" -i 0.2 || return
	sleep 2
	stop_top || return
	kill "$storm" 2>/dev/null
	local line=$(final '.reconcile[] | select(.cause == "rcvbuf")')
	[[ -n $line ]] || { fail "no rcvbuf reconciliation line"; return; }
	local k=$(jq -r .kernel <<<"$line") u=$(jq -r .udpdrop <<<"$line")
	local s=$(jq -r .kernel_spread <<<"$line")
	expect_gt "drops during the storm" "$u" 1000
	local d=$((u > k ? u - k : k - u))
	if [[ ! $s =~ ^[0-9]+$ ]] || ((d > s)); then
		fail "kernel $k, udpdrop $u: differ by $d, beyond the counters' spread '$s'"
	else
		echo "    ok: kernel $k, udpdrop $u: within the spread $s"
	fi
	expect_eq "reconciled as a match" "$(jq -r .match <<<"$line")" true
}

# One port bound by one socket after another (a service restarting, or
# clients on a fixed port), each closing with 2 datagrams queued: the
# purges all share one flow (the kernel names only the port), which goes
# to each socket in turn; more sockets than the flow's attribution has
# room for (8) still each get their own 2, and nothing is left without
# a socket. Each socket is given its cookie (a dump, as top's own would)
# before it is killed: its purge is then named in the kernel whenever
# top's refreshes fall. (A socket no dump saw before it closed is
# close_unseen_case's: under -N its purge may stay in netns_unknown when
# many sockets shared the port; the kernel zeroes sk_ino at the close, so
# only a cookie names it. CI once lost one socket's 2 that way here.)
test_same_port_many_sockets() {
	setup_hosts || return
	local i n=12 rpid
	start_top -N "$B" -i 0.3 || return
	for ((i = 1; i <= n; i++)); do
		start_recv "$B" "$V4B:5066" --rcvbuf 1000000 || return
		rpid=$RECV_PID
		send "$A" "$V4B:5066" -c 2 -s 100 >/dev/null
		ip netns exec "$B" ss -uaen "sport = :5066" >/dev/null
		settle 0.3
		{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
		# this socket's purge seen before the next binds the port
		wait_close_drops $((2 * i))
	done
	stop_top || return
	expect_eq "socket_close drops" "$(final '.totals.causes.socket_close')" $((2 * n))
	expect_eq "all on sockets" "$(final '.totals.attributed')" $((2 * n))
	expect_eq "none left to the flow" "$(final '[.unattributed[]] | length')" 0
	expect_eq "sockets with 2 each" \
		"$(final '[.sockets[] | select(.local | endswith(":5066")) | select(.causes.socket_close == 2)] | length')" $n
}

# A long run keeps memory for what runs now: sockets closed and quiet for
# UDPDROP_FOLD_AFTER_S (here 2 s) fold into one "(closed sockets)" row of
# their netns; the totals do not move, and each cause stays exact.
test_closed_sockets_fold() {
	setup_hosts || return
	local n=300
	UDPDROP_FOLD_AFTER_S=2 start_top -N "$B" || return
	ip netns exec "$B" "$UDPTEST" churn 127.0.0.1:0 -n $n --rate 150 --drops 4 >/dev/null
	# quiet for the fold age, and a fold pass (every second with so short an age)
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(tail -n 1 "$TOP_OUT" | jq -r '.tables.given_back // 0') -ge $n ]] && break
		sleep 0.1
	done
	sleep 5
	stop_top || return
	expect_eq "socket_filter drops" "$(final '.totals.causes.socket_filter')" $((n * 4))
	expect_eq "all attributed" "$(final '.totals.attributed')" $((n * 4))
	expect_eq "one (closed sockets) row" \
		"$(final '[.sockets[] | select(.local == "(closed sockets)")] | length')" 1
	expect_eq "it holds what the sockets had" \
		"$(final '[.sockets[] | .causes.socket_filter // 0] | add')" $((n * 4))
	local rows=$(final '.sockets | length')
	if ((rows >= n)); then
		fail "$rows rows for $n closed sockets: none folded"
	else
		echo "    ok: $rows rows for $n closed sockets"
	fi
}

# Churn at any rate keeps memory bounded: past UDPDROP_CLOSED_ROWS_MAX
# (here 40) closed sockets with rows of their own, the longest quiet fold
# early, long before the fold age (120 s). Short-lived sockets on ports of
# their own, each with receive-buffer drops and nothing queued at close:
# top and record count every drop as rcvbuf (the sockets' own counters,
# UdpRcvbufErrors) and none as socket_close, folded or not.
test_closed_sockets_fold_early() {
	setup_hosts || return
	local before=$(mib "$B" Udp RcvbufErrors)
	export UDPDROP_CLOSED_ROWS_MAX=40
	start_record "$T/f.data" -N "$B" -i "$TOP_INTERVAL" || return
	start_top -N "$B" || return
	unset UDPDROP_CLOSED_ROWS_MAX
	ip netns exec "$B" "$UDPTEST" churn 127.0.0.1:0 -n 400 --rate 100 --rcvbuf-drops 4 >"$T/churn.out"
	cat "$T/churn.out" | sed 's/^/    churn: /'
	local skd=$(awk '/^rcvbuf_dropped/ { print $2 }' "$T/churn.out")
	expect_eq "queued at any close" "$(awk '/^queued_at_close/ { print $2 }' "$T/churn.out")" 0
	# their kernel entries given back (checked every interval while over
	# the cap), quiet 2 s, then a fold pass (every second while over it)
	local i
	for ((i = 0; i < 150; i++)); do
		[[ $(tail -n 1 "$TOP_OUT" | jq -r '.tables.given_back // 0') -ge 360 ]] && break
		sleep 0.1
	done
	sleep 4
	stop_record
	stop_top || return
	expect_eq "UdpRcvbufErrors delta = the sockets' own drops" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$skd"
	expect_eq "top: rcvbuf" "$(final '.totals.causes.rcvbuf')" "$skd"
	expect_eq "top: drops (no socket_close: nothing was queued)" "$(final '.totals.drops')" "$skd"
	expect_eq "top: all attributed" "$(final '.totals.attributed')" "$skd"
	local rows=$(final '[.sockets[] | select(.local != "(closed sockets)")] | length')
	if ((rows > 40)); then
		fail "top: $rows closed sockets kept rows of their own, past the cap of 40"
	else
		echo "    ok: top: $rows rows of their own for 400 closed sockets (cap 40)"
	fi
	expect_eq "top: the (closed sockets) row and the rest hold them all" \
		"$(final '[.sockets[] | .causes.rcvbuf // 0] | add')" "$skd"
	"$UDPDROP" report --json "$T/f.data" >"$T/f.json" 2>"$T/f.err" || fail "report: $(cat "$T/f.err")"
	expect_eq "report: drops, rcvbuf, socket_close" \
		"$(jq -r '"\(.totals.drops) \(.totals.causes.rcvbuf.drops) \(.totals.causes.socket_close.drops // 0)"' "$T/f.json")" \
		"$skd $skd 0"
}

# member_queues PORT: "PEER_PORT RECVQ_BYTES COOKIE INODE" per socket on
# local PORT in netns B, from ss (its dump also gives each a cookie).
member_queues() {
	ip netns exec "$B" ss -uaneH "( sport = :$1 )" 2>/dev/null |
		awk '{ n = split($5, p, ":"); c = ""; i = ""
		       for (f = 6; f <= NF; f++) {
		           if ($f ~ /^sk:/) c = substr($f, 4)
		           if ($f ~ /^ino:/) i = substr($f, 5) }
		       print p[n], $2, c, i }' |
		while read -r peer bytes hex ino; do
			echo "$peer $bytes $((16#${hex:-0})) $ino"
		done
}

# Four SO_REUSEPORT sockets on one port, each connected to its own sender
# port and holding a different number of unread datagrams (3, 5, 7, 9: ss
# shows each queue), killed together: each socket's socket_close count is
# its own queue, in top and in record + report. The kernel frees the four
# queues one after another from RCU callbacks with no socket named (the
# purged datagrams all carry the same flow but the peer port); before the
# kernel side named the socket at the end of each purge, the four were one
# flow's and went to one socket (or to none).
close_shared_port_case() { # $1: top or record; $2: the port; more: udpdrop's
	local mode=$1 port=$2 sp=$(($2 + 36000)) n=4 i rpid total=0
	local -a want
	shift 2
	if [[ $mode == top ]]; then
		start_top -N "$B" -i 0.3 -v "$@" || return
	else
		start_record "$T/shared.data" -N "$B" -i 0.3 -v "$@" || return
	fi
	start_recv "$B" "$V4B:$port" --rcvbuf 1000000 --reuseport $n --peer "$V4A:$sp" || return
	rpid=$RECV_PID
	for ((i = 0; i < n; i++)); do
		want[i]=$((3 + 2 * i))
		total=$((total + want[i]))
		expect_eq "sent from port $((sp + i))" \
			"$(send "$A" "$V4B:$port" -c "${want[i]}" -s 200 --sport $((sp + i)))" "${want[i]}"
	done
	settle
	# ground truth: each member's queue, as the kernel holds it
	local q=$(member_queues "$port") unit=
	echo "$q" | sed 's/^/    ss: /'
	expect_eq "members on the port" "$(wc -l <<<"$q")" $n
	for ((i = 0; i < n; i++)); do
		local bytes=$(awk -v p=$((sp + i)) '$1 == p { print $2 }' <<<"$q")
		[[ $bytes =~ ^[0-9]+$ ]] && ((bytes > 0)) || { fail "no queue for peer $((sp + i))"; return; }
		# every datagram is charged the same truesize: bytes / count is one value
		unit=${unit:-$((bytes / want[i]))}
		expect_eq "queue of the member for $((sp + i)) (bytes)" "$bytes" $((unit * want[i]))
	done
	# the port is shared: the socket's free names closing queues from now on
	# (kmem:kmem_cache_free attached then, not before: tracer__arm_close)
	local errf=$T/top.err
	[[ $mode == top ]] || errf=$T/rec.err
	for ((i = 0; i < 300; i++)); do
		grep -q "a local port is shared by sockets" "$errf" && break
		sleep 0.1
	done
	expect_eq "$mode: armed once the port is shared" "$(grep -c "a local port is shared by sockets" "$errf")" 1
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	local out
	if [[ $mode == top ]]; then
		wait_close_drops $total
		stop_top || return
		out=$T/final.json
		expect_eq "nothing of unknown netns" "$(final '.totals.netns_unknown')" 0
	else
		for ((i = 0; i < 200; i++)); do
			local got=$("$TRACECAT" "$T/shared.data" 2>/dev/null | jq -s '[.[] | select(.type == "COUNTS")] | last | [.counts[]? | select(.flags / 256 | floor % 2 == 1) | .datagrams] | add // 0' 2>/dev/null)
			[[ $got =~ ^[0-9]+$ ]] && ((got >= total)) && break
			sleep 0.1
		done
		kill -INT "$REC"
		wait "$REC"
		expect_eq "record exit" $? 0
		"$UDPDROP" report --json "$T/shared.data" >"$T/report.json" 2>"$T/report.err" ||
			{ fail "report: $(cat "$T/report.err")"; return; }
		out=$T/report.json
	fi
	local tot
	if [[ $mode == top ]]; then
		tot=$(jq -r '.totals.causes.socket_close' "$out")
	else
		tot=$(jq -r '.totals.causes.socket_close.drops' "$out")
	fi
	expect_eq "$mode: socket_close in all" "$tot" $total
	for ((i = 0; i < n; i++)); do
		local cookie=$(awk -v p=$((sp + i)) '$1 == p { print $3 }' <<<"$q")
		local ino=$(awk -v p=$((sp + i)) '$1 == p { print $4 }' <<<"$q")
		expect_eq "$mode: socket_close of the member for $((sp + i)) (cookie $cookie)" \
			"$(jq -r --argjson c "$cookie" --argjson i "$ino" \
				'[.sockets[] | select(.cookie == $c or .inode == $i) | .causes.socket_close // 0] | add // "none"' "$out")" \
			"${want[i]}"
	done
	if [[ $mode == top ]]; then
		jq -c '.sockets[] | {local, remote, cookie, inode, netns, causes}' "$out" | sed 's/^/    top: /'
	else
		jq -c '.sockets[] | {local, remote, cookie, inode, netns, causes}' "$out" | sed 's/^/    report: /'
	fi
}

test_close_shared_port_top() {
	setup_hosts || return
	close_shared_port_case top 5067
}

test_close_shared_port_record() {
	setup_hosts || return
	close_shared_port_case record 5068
}

# the raw tracepoints (probe reads throughout): the same
test_close_shared_port_raw_tp() {
	setup_hosts || return
	close_shared_port_case top 5069 --attach raw_tp
}

# Kernels before 6.6 count no deliveries (no sock:sk_data_ready): udpdrop
# learns of sockets that never dropped only from dumps, so until a port is
# shared it dumps the netns in view every second (MODEL_SHARING_DUMP_NS),
# and the members' purged queues are still each their own. (Before: no dump
# after the first, never armed; bullseye in the matrix: every member's
# socket_close "none".)
test_close_shared_port_no_deliveries() {
	export UDPDROP_NO_SK_DATA_READY=1
	setup_hosts || return
	close_shared_port_case top 5070
	grep -q "deliveries not counted" "$T/top.err" ||
		fail "UDPDROP_NO_SK_DATA_READY did not turn deliveries off: $(head -3 "$T/top.err")"
}

test_close_shared_port_record_no_deliveries() {
	export UDPDROP_NO_SK_DATA_READY=1
	setup_hosts || return
	close_shared_port_case record 5071
}
