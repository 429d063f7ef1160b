# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of -N: the traced netns held for the run (its inode
# never goes to a new netns while udpdrop runs, so no other netns's drops
# merge into it), the stop once nothing but udpdrop keeps it, and what -N
# refuses (an empty string; a FIFO, socket, device, file or directory,
# without opening it). Sourced by run.sh.
#
# Drops here are datagrams to 127.0.0.1:9 in a netns of its own, where
# nobody listens: exactly one no_socket drop each (UdpNoPorts).

# One netns, $A, loopback up, and the test's directory $T.
netns_host() {
	A=udt-$$-n
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	ip netns add "$A" && ip -n "$A" link set lo up ||
		{ fail "cannot make netns $A"; return 1; }
}

# noport NS N: N datagrams to a port nobody has in NS; prints the number sent.
noport() { send "$1" 127.0.0.1:9 -c "$2"; }

# ended PID [TENTHS]: true once PID has ended (a zombie not yet waited for
# counts), false after TENTHS tenths of a second (default 150).
ended() {
	local i s
	for ((i = 0; i < ${2:-150}; i++)); do
		s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
		[[ -z $s || $s == Z ]] && return 0
		sleep 0.1
	done
	return 1
}

# sleeper_in NS: a process in NS (SLEEPER), once it is there.
sleeper_in() {
	local i
	ip netns exec "$1" sleep 600 &
	SLEEPER=$!
	BG_PIDS+=("$SLEEPER")
	for ((i = 0; i < 100; i++)); do
		[[ $(readlink "/proc/$SLEEPER/ns/net") == "net:[$(ns_inode "$1")]" ]] && return 0
		sleep 0.1
	done
	fail "no process in $1"
	return 1
}

# top_lines_after N: wait until top has written N more lines than now
# (intervals it has lived through). TOP_LINES: the count it reached.
top_lines_after() {
	local want=$(($(wc -l <"$TOP_OUT") + $1)) i
	for ((i = 0; i < 200; i++)); do
		TOP_LINES=$(wc -l <"$TOP_OUT")
		((TOP_LINES >= want)) && return 0
		sleep 0.1
	done
	return 1
}

# top_drops N: wait until an interval of top says N drops in total.
top_drops() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(tail -n 1 "$TOP_OUT" | jq -r .totals.drops 2>/dev/null) == "$1" ]] && return 0
		sleep 0.1
	done
	fail "top never counted $1 drops: $(tail -n 1 "$TOP_OUT" | cut -c1-300)"
	return 1
}

# new_netns_after NAME INODE: netns NAME-1, NAME-2, ..., each replacing the
# one before, until one gets INODE (a destroyed netns's inode is handed out
# again, usually at once) or 20 have been made. The last stays (NEW_NS,
# loopback up); REUSED names the one that got INODE, "" if none did.
new_netns_after() {
	local k ino
	NEW_NS= REUSED=
	for ((k = 1; k <= 20; k++)); do
		ip netns add "$1-$k" || { fail "cannot make netns $1-$k"; return 1; }
		EXTRA_NETNS+=("$1-$k")
		[[ -n $NEW_NS ]] && ip netns del "$NEW_NS"
		NEW_NS=$1-$k
		ino=$(ns_inode "$NEW_NS")
		[[ $ino == "$2" ]] && { REUSED=$NEW_NS; break; }
	done
	ip -n "$NEW_NS" link set lo up
}

# expect_gone_line WHO INODE THEN ERRFILE: the stop line, once.
expect_gone_line() {
	expect_eq "'netns ... is gone' lines" \
		"$(grep -c "^$1: netns $A (inode $2) is gone (no process is in it, nothing mounts it): $3\$" "$4")" 1
}

# Issue 17.4: A destroyed while top -N A runs; new netns made after it.
# The pin keeps A (and its inode) while top runs: none of the new ones gets
# A's inode, their drops are not A's, and top stops by itself, exit 0, its
# summary exactly A's 150. (top is held with SIGSTOP meanwhile, so that
# "while top runs" spans every new netns; before the fix the 20 tries give
# one of them A's inode and top counts its 30 drops as A's, for ever.)
test_netns_gone_top() {
	local ino rc
	netns_host || return
	ino=$(ns_inode "$A")
	start_top -N "$A" || return
	expect_eq "sent in A" "$(noport "$A" 150)" 150
	top_drops 150 || return
	kill -STOP "$TOP_PID"
	ip netns del "$A"
	new_netns_after "$A" "$ino" || return
	expect_eq "a new netns with A's inode while top runs" "${REUSED:-none}" none
	expect_eq "sent in the new netns" "$(noport "$NEW_NS" 30)" 30
	kill -CONT "$TOP_PID"
	if ! ended "$TOP_PID"; then
		fail "top still runs 15 s after its netns went: $(tail -n 1 "$TOP_OUT" | jq -c '[.totals.drops, [.unattributed[] | [.netns, .drops]]]')"
		kill -INT "$TOP_PID"
	fi
	wait "$TOP_PID"
	rc=$?
	TOP_PID=
	expect_eq "top exit code" "$rc" 0
	expect_gone_line udpdrop "$ino" stopping "$T/top.err"
	tail -n 1 "$TOP_OUT" >"$T/final.json"
	expect_eq "final" "$(final .final)" true
	expect_eq "stopped" "$(final .stopped)" netns_gone
	expect_eq "totals.drops (A's alone)" "$(final .totals.drops)" 150
	expect_eq "rows: netns and drops" \
		"$(final '[.sockets[], .unattributed[] | "\(.netns)/\(.drops)"] | join(",")')" "$ino/150"
	expect_eq "row netns_name" "$(final '.unattributed[0].netns_name')" "$A"
	expect_eq "reconcile" \
		"$(final '[.reconcile[] | "\(.netns) \(.cause) \(.kernel) \(.udpdrop)"] | join(",")')" \
		"$ino no_socket 150 150"
	# let go at the end: the inode is free again (no netns of udpdrop left)
	expect_eq "pin left" "$(ls -l /proc/*/fd 2>/dev/null | grep -c "net:\[$ino\]")" 0
}

# The same for record: the file ends with END, A alone and its 150 drops.
test_netns_gone_record() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	local ino rc rec i
	netns_host || return
	ino=$(ns_inode "$A")
	start_record "$T/t.data" -N "$A" -i 0.5 || return
	rec=$REC
	expect_eq "sent in A" "$(noport "$A" 150)" 150
	kill -STOP "$rec"
	ip netns del "$A"
	new_netns_after "$A" "$ino" || return
	expect_eq "a new netns with A's inode while record runs" "${REUSED:-none}" none
	expect_eq "sent in the new netns" "$(noport "$NEW_NS" 30)" 30
	kill -CONT "$rec"
	ended "$rec" || { fail "record still runs 15 s after its netns went"; kill -INT "$rec"; }
	wait "$rec"
	rc=$?
	expect_eq "record exit code" "$rc" 0
	expect_gone_line "udpdrop record" "$ino" stopping "$T/rec.err"
	grep -qE "^udpdrop record: 150 drops, 150 events \(0 shed\) in [0-9.]+ s written to $T/t.data " "$T/rec.err" ||
		fail "summary line: $(cat "$T/rec.err")"

	tc_records "$T/t.data"
	expect_eq "status" "$(tq '.[-1].status')" complete
	expect_eq "END present" "$(tq '[.[] | select(.type == "END")] | length')" 1
	expect_eq "netns in COUNTS" "$(tq '[.[] | select(.type == "COUNTS") | .counts[].netns] | unique | map(tostring) | join(",")')" "$ino"
	expect_eq "last COUNTS" "$(tq '[.[] | select(.type == "COUNTS")][-1].counts | map(.datagrams) | add')" 150
	expect_eq "EVENTs" "$(tq '[.[] | select(.type == "EVENT")] | length')" 150

	"$UDPDROP" report --json "$T/t.data" >"$T/report.json" 2>"$T/report.err"
	expect_eq "report exit code" "$?" 0
	expect_eq "report: rows (netns/drops)" \
		"$(jq -r '[.sockets[], .unattributed[] | "\(.netns)/\(.drops)"] | join(",")' "$T/report.json")" "$ino/150"
	expect_eq "report: reconcile (netns cause kernel udpdrop)" \
		"$(jq -r '[.reconcile[] | select(.kernel + .udpdrop > 0) | "\(.netns) \(.cause) \(.kernel) \(.udpdrop)"] | join(",")' "$T/report.json")" \
		"$ino no_socket 150 150"
}

# doctor -N A: the sample ends when A goes, and says so; what it found is
# A's (traced, or from the counters alone: read through the pin).
doctor_gone_case() {
	local ino
	netns_host || return
	ino=$(ns_inode "$A")
	start_doctor -N "$A" -d 120 "$@" || return
	expect_eq "sent in A" "$(noport "$A" 150)" 150
	ip netns del "$A"
	ended "$DOC_PID" 600 || { fail "doctor still samples 60 s after its netns went"; kill -INT "$DOC_PID"; }
	wait_doctor
	expect_gone_line "udpdrop doctor" "$ino" "the sample ends early" "$T/doc.err"
	expect_eq "stopped" "$(dq .stopped)" netns_gone
	expect_eq "duration_s below the 120 asked" "$(dq '.duration_s < 120')" true
	expect_eq "findings (netns cause drops)" \
		"$(dq '[.findings[] | "\(.netns) \(.cause) \(.drops)"] | unique | join(",")')" "$ino no_socket 150"
	expect_eq "counters: A's only" "$(dq '.counters | keys | join(",")')" "$ino"
	expect_eq "UdpNoPorts" "$(dq ".counters[\"$ino\"].UdpNoPorts")" 150
}
test_netns_gone_doctor() { doctor_gone_case; }
test_netns_gone_doctor_counters_only() { doctor_gone_case --counters-only; }

# "Gone" is what the user sees: a mount of A here, a process in A, a mount
# of A in another mount namespace keep top going after `ip netns del`, one
# after the other; when the last goes, top stops.
test_netns_kept_then_gone() {
	local ino rc pid mnt i
	netns_host || return
	ino=$(ns_inode "$A")
	sleeper_in "$A" || return
	pid=$SLEEPER
	touch "$T/keep" "$T/keep2"
	mount --bind "/run/netns/$A" "$T/keep" || { fail "cannot bind-mount $A"; return; }
	# a private mount namespace of a process in ours (the netns of udpdrop)
	unshare --mount --propagation private \
		bash -c "mount --bind /run/netns/$A $T/keep2 && echo ready >$T/mnt.ready && exec sleep 600" &
	mnt=$!
	BG_PIDS+=("$mnt")
	for ((i = 0; i < 50; i++)); do
		[[ -s $T/mnt.ready ]] && break
		sleep 0.1
	done
	[[ -s $T/mnt.ready ]] || { fail "no mount of $A in another mount namespace"; umount "$T/keep"; return; }
	start_top -N "$A" || { umount "$T/keep"; return; }
	expect_eq "sent in A" "$(noport "$A" 150)" 150
	ip netns del "$A"
	# three intervals with each set of holders: still running
	top_lines_after 3 || fail "top wrote no intervals: $(cat "$T/top.err")"
	expect_eq "runs with mounts and a process" "$(ended "$TOP_PID" 1 && echo ended || echo runs)" runs
	umount "$T/keep"
	top_lines_after 3 || fail "top wrote no intervals: $(cat "$T/top.err")"
	expect_eq "runs with a process and another mount namespace's mount" \
		"$(ended "$TOP_PID" 1 && echo ended || echo runs)" runs
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	top_lines_after 3 || fail "top wrote no intervals: $(cat "$T/top.err")"
	expect_eq "runs with another mount namespace's mount" \
		"$(ended "$TOP_PID" 1 && echo ended || echo runs)" runs
	kill -KILL "$mnt"
	wait "$mnt" 2>/dev/null
	ended "$TOP_PID" || { fail "top still runs 15 s after its netns went"; kill -INT "$TOP_PID"; }
	wait "$TOP_PID"
	rc=$?
	TOP_PID=
	expect_eq "top exit code" "$rc" 0
	expect_gone_line udpdrop "$ino" stopping "$T/top.err"
	tail -n 1 "$TOP_OUT" >"$T/final.json"
	expect_eq "stopped" "$(final .stopped)" netns_gone
	expect_eq "totals.drops" "$(final .totals.drops)" 150
}

# -p PID: the netns pinned is the process's; it goes with the process.
test_netns_gone_pid() {
	local ino rc pid
	netns_host || return
	ino=$(ns_inode "$A")
	sleeper_in "$A" || return
	pid=$SLEEPER
	start_top -p "$pid" || return
	ip netns del "$A"
	top_lines_after 2 || fail "top wrote no intervals: $(cat "$T/top.err")"
	expect_eq "runs with the process" "$(ended "$TOP_PID" 1 && echo ended || echo runs)" runs
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	ended "$TOP_PID" || { fail "top -p still runs 15 s after its netns went"; kill -INT "$TOP_PID"; }
	wait "$TOP_PID"
	rc=$?
	TOP_PID=
	expect_eq "top exit code" "$rc" 0
	tail -n 1 "$TOP_OUT" >"$T/final.json"
	# the process's exit ends top -p too: whichever top sees first
	case $(final .stopped) in
	netns_gone) expect_gone_line udpdrop "$ino" stopping "$T/top.err" ;;
	pid_gone) expect_eq "the line" "$(grep -c "process $pid exited: stopping" "$T/top.err")" 1 ;;
	*) fail "stopped: $(final .stopped), want netns_gone or pid_gone" ;;
	esac
}

# The live view: A goes, the view closes, the line and the summary stay.
test_netns_gone_tui() {
	local ino
	command -v tmux >/dev/null || { echo "    skip: no tmux"; return; }
	netns_host || return
	ino=$(ns_inode "$A")
	tui_start 120 30 -N "$A" -i 0.5 || return
	expect_eq "sent in A" "$(noport "$A" 150)" 150
	tui_wait '150' || fail "the view never showed 150 drops: $(tui_screen)"
	ip netns del "$A"
	expect_eq "exit code" "$(tui_exit)" 0
	expect_eq "'is gone' lines" \
		"$(grep -c "^udpdrop: netns $A (inode $ino) is gone (no process is in it, nothing mounts it): stopping\$" "$T/tui.err")" 1
	expect_eq "alternate screen left" "$(tui_flag alternate_on)" 0
	tmux -L "$TMUX_SOCK" capture-pane -p -S -200 -t tui | grep -q "^total 150 datagrams dropped" ||
		fail "no summary of 150 drops: $(tmux -L "$TMUX_SOCK" capture-pane -p -S -200 -t tui)"
}

# Issue 17.7: a FIFO, socket, device, regular file or directory as -N is
# refused at once (a FIFO used to block open(2) for ever), in one line,
# exit 2, and opened never (the FIFO's writer sees no reader).
test_netns_not_a_netns_file() {
	local f cmd out rc
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	mkfifo "$T/fifo" && mknod "$T/null" c 1 3 && : >"$T/file" && mkdir "$T/dir" &&
		python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock" ||
		{ fail "cannot make the files"; return; }
	for f in fifo sock null file dir; do
		for cmd in top record doctor; do
			case $cmd in
			top) out=$(timeout 5 "$UDPDROP" top -n 1 --batch -N "$T/$f" </dev/null 2>&1) ;;
			record) out=$(timeout 5 "$UDPDROP" record -d 1 -o "$T/rec.data" -N "$T/$f" 2>&1) ;;
			doctor) out=$(timeout 5 "$UDPDROP" doctor -d 1 -N "$T/$f" 2>&1) ;;
			esac
			rc=$?
			expect_eq "$cmd -N $f: exit code" "$rc" 2
			expect_eq "$cmd -N $f: output" "$out" \
				"udpdrop $cmd: unknown netns '$T/$f': not a network namespace file (give an \`ip netns\` name, /proc/PID/ns/net, /run/netns/NAME or a netns inode)"
		done
	done
	[[ -e $T/rec.data ]] && fail "record left $T/rec.data"
	expect_eq "still a FIFO" "$(stat -c %F "$T/fifo")" fifo
	expect_eq "still the device" "$(stat -c '%F %t:%T' "$T/null")" "character special file 1:3"
}

# Issue 17.10: -N "" (a script's unset variable) is never "this netns".
test_netns_empty() {
	local cmd v out rc
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	for cmd in top record doctor; do
		for v in "" " " $'\t'; do
			case $cmd in
			top) out=$(timeout 5 "$UDPDROP" top -n 1 --batch -N "$v" </dev/null 2>&1) ;;
			record) out=$(timeout 5 "$UDPDROP" record -d 1 -o "$T/rec.data" -N "$v" 2>&1) ;;
			doctor) out=$(timeout 5 "$UDPDROP" doctor -d 1 -N "$v" 2>&1) ;;
			esac
			rc=$?
			expect_eq "$cmd -N '$v': exit code" "$rc" 2
			expect_eq "$cmd -N '$v': first line" "$(head -n 1 <<<"$out")" \
				"udpdrop $cmd: -N needs a netns name, path or inode (got $([[ -z $v ]] && echo "an empty string" || echo "only white space"))"
		done
	done
	[[ -e $T/rec.data ]] && fail "record left $T/rec.data"
}
