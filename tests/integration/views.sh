# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One socket, one row, in every view (issue 13): a real application's
# socket is one row in top --json and in report (text and JSON) with the
# kernel's counts, and a socket that closes keeps its owner and reads as
# no reconciliation mismatch. Sourced by run.sh (record.sh's and
# doctor.sh's helpers).

# vq FILE FILTER...: jq -r over a JSON file.
vq() { local f=$1; shift; jq -r "$@" "$f"; }

# views_record_and_top NS ARGS...: udpdrop record (to $T/v.data) and top
# --json, both on netns NS, started and ready.
views_record_and_top() {
	local ns=$1
	shift
	start_record "$T/v.data" -N "$ns" -i "$TOP_INTERVAL" "$@" || return
	start_top -N "$ns" || return
}

# views_stop: both stopped, their summaries kept (top's in final.json).
views_stop() {
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	stop_top
	"$UDPDROP" report "$T/v.data" >"$T/v.txt" 2>"$T/v.rerr"
	expect_eq "report exit code" "$?" 0
	"$UDPDROP" report --json "$T/v.data" >"$T/v.json" 2>>"$T/v.rerr"
	expect_eq "report --json exit code" "$?" 0
}

# iperf3 over UDP into a receiver that cannot keep up: the server's data
# socket is made after udpdrop's first dump, so its first drops are known
# by inode, the rest by cookie. It is one socket: one row in top and in
# report (text and JSON) and doctor's findings, each with the kernel's
# count. The server is
# stopped before the client ends so the socket is still there for ss.
test_views_iperf3_one_row() {
	command -v iperf3 >/dev/null || { fail "iperf3 is not installed (tools/deps.sh)"; return; }
	setup_hosts || return
	local port=5301 spid cpid ns i
	ns=$(ns_inode "$B")
	ip netns exec "$B" iperf3 -s -p "$port" >"$T/iperf-s.out" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	for ((i = 0; i < 50; i++)); do
		ip netns exec "$B" ss -tlnH "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	local before=$(mib "$B" Udp RcvbufErrors)
	views_record_and_top "$B" || return
	start_doctor -N "$B" -d 600 || return
	ip netns exec "$A" timeout 15 iperf3 -c "$V4B" -p "$port" -u -b 2G -l 1400 -t 3 \
		>"$T/iperf-c.out" 2>&1 &
	cpid=$!
	BG_PIDS+=("$cpid")
	# the data socket, once it exists; stop its reader near the end
	for ((i = 0; i < 50; i++)); do
		ip netns exec "$B" ss -uanH "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	sleep 2.5
	kill -STOP "$spid"
	wait "$cpid" # the client waits for results the stopped server never sends
	settle 1
	local d=$(ss_drops "$B" "$port")
	local kernel=$(($(mib "$B" Udp RcvbufErrors) - before))
	kill -INT "$DOC_PID"
	wait_doctor
	views_stop
	{ kill -KILL "$spid" && wait "$spid"; } 2>/dev/null
	expect_gt "kernel UdpRcvbufErrors delta" "$kernel" 0
	expect_eq "ss -uam d = UdpRcvbufErrors delta" "$d" "$kernel"
	local l="$V4B:$port"
	local tsel=".sockets[] | select(.local | startswith(\"$V4B:\"))"
	expect_eq "top: rows of the receiver" "$(final "[$tsel] | length")" 1
	expect_eq "top: its rcvbuf drops" "$(final "[$tsel][0].causes.rcvbuf")" "$kernel"
	expect_eq "top: its owner" "$(final "[$tsel][0].comm")" iperf3
	local rsel=".sockets[] | select(.local == \"$l\")"
	expect_eq "report JSON: rows of the receiver" "$(vq "$T/v.json" "[$rsel] | length")" 1
	expect_eq "report JSON: its rcvbuf drops" "$(vq "$T/v.json" "[$rsel][0].causes.rcvbuf")" "$kernel"
	expect_eq "report JSON: its drops = top's" "$(vq "$T/v.json" "[$rsel][0].drops")" "$(final "[$tsel][0].drops")"
	expect_eq "report JSON: its owner" "$(vq "$T/v.json" "[$rsel][0].comm")" iperf3
	expect_eq "report JSON: advice items for it" \
		"$(vq "$T/v.json" --argjson c "$(vq "$T/v.json" "[$rsel][0].cookie // 0")" \
			'[.advice[] | select(.socket == $c)] | length')" 1
	expect_eq "report JSON: advice items" "$(vq "$T/v.json" '.advice | length')" 1
	expect_eq "report text: rows of the receiver" \
		"$(sed -n '/^Sockets/,/^$/p' "$T/v.txt" | grep -c "^  $l ")" 1
	grep -qE "^  $l +[^ ]+ +$B +[0-9]+/iperf3 +$(commas "$(vq "$T/v.json" "[$rsel][0].drops")") " "$T/v.txt" ||
		fail "report text row: $(sed -n '/^Sockets/,/^$/p' "$T/v.txt")"
	expect_eq "report text: advice items for it" \
		"$(sed -n '/^Advice/,$p' "$T/v.txt" | grep -c "^  $l  netns")" 1
	local dsel=".findings[] | select(.local == \"$l\")"
	# one rcvbuf finding (not one per key); iperf3 may close its socket with
	# datagrams queued while doctor still samples: a socket_close finding
	expect_eq "doctor: rcvbuf findings for the receiver" \
		"$(dq "[$dsel | select(.cause == \"rcvbuf\")] | length")" 1
	expect_eq "doctor: its rcvbuf drops" "$(dq "[$dsel | select(.cause == \"rcvbuf\")][0].drops")" "$kernel"
	expect_eq "doctor: its socket = report's" "$(dq "[$dsel][0] | \"\(.socket) \(.socket_id_kind)\"")" \
		"$(vq "$T/v.json" "[$rsel][0].cookie") cookie"
	expect_eq "report: rcvbuf reconciliation" \
		"$(vq "$T/v.json" --argjson ns "$ns" '.reconcile[] | select(.netns == $ns and .cause == "rcvbuf") | "\(.kernel) \(.status)"')" \
		"$kernel match"
}

# A socket that drops and closes between two refreshes: it was bound
# before udpdrop started (the first dump has it, no drops yet), then 300
# datagrams into a 4 KiB buffer and the receiver exits right after a
# refresh. Its owner was there to be found while it lived: top and report
# name it after the close, and its last-read sk_drops (taken before the
# drops) is said to be stale, not held against the drops.
test_views_closed_socket_owner() {
	setup_hosts || return
	start_recv "$B" "$V4B:5302" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT n i
	local before=$(mib "$B" Udp RcvbufErrors)
	TOP_INTERVAL=1 views_record_and_top "$B" || return
	# just after a refresh: the drops and the close come before the next
	n=$(wc -l <"$TOP_OUT")
	for ((i = 0; i < 100; i++)); do
		(($(wc -l <"$TOP_OUT") > n)) && break
		sleep 0.05
	done
	local sent=$(send "$A" "$V4B:5302" -c 300 -s 1000)
	local got=$(stop_recv "$rpid" "$rout")
	wait "$rpid" 2>/dev/null
	local dropped=$((sent - got))
	settle 2.5
	views_stop
	expect_gt dropped "$dropped" 0
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	local l="$V4B:5302"
	expect_eq "top: drops" "$(socket_field "$l" .drops)" "$dropped"
	expect_eq "top: alive" "$(socket_field "$l" .alive)" false
	expect_eq "top: comm after close" "$(socket_field "$l" .comm)" udptest
	expect_eq "top: pid after close" "$(socket_field "$l" .pid)" "$rpid"
	expect_eq "top: sk_drops said stale" "$(socket_field "$l" .sk_drops_stale)" true
	expect_eq "top: reconciliation all match" "$(final '[.reconcile[] | .match] | all')" true
	local rsel=".sockets[] | select(.local == \"$l\")"
	expect_eq "report JSON: drops" "$(vq "$T/v.json" "[$rsel][0].drops")" "$dropped"
	expect_eq "report JSON: comm after close" "$(vq "$T/v.json" "[$rsel][0].comm")" udptest
	expect_eq "report JSON: pid after close" "$(vq "$T/v.json" "[$rsel][0].pid")" "$rpid"
	expect_eq "report JSON: reconciliation all match" \
		"$(vq "$T/v.json" '[.reconcile[] | .status == "match"] | all')" true
	grep -qE "^  $l +[^ ]+ +$B +$rpid/udptest +$(commas "$dropped") " "$T/v.txt" ||
		fail "report text row: $(sed -n '/^Sockets/,/^$/p' "$T/v.txt")"
}

# top_refreshes N: until top --json has printed N more refreshes.
top_refreshes() {
	local n=$(($(wc -l <"$TOP_OUT") + $1)) i
	for ((i = 0; i < 600; i++)); do
		(($(wc -l <"$TOP_OUT") >= n)) && return 0
		sleep 0.05
	done
	fail "top --json printed no refresh: $(tail -c 300 "$TOP_ERR")"
	return 1
}

# record_snapshots FILE N: until the recording FILE has grown N times
# (each snapshot is flushed as it is written).
record_snapshots() {
	local f=$1 n=$2 size i
	size=$(stat -c %s "$f")
	for ((i = 0; i < 600 && n > 0; i++)); do
		if (($(stat -c %s "$f") > size)); then
			size=$(stat -c %s "$f")
			((n--))
		fi
		sleep 0.05
	done
	((n == 0)) || { fail "udpdrop record wrote no snapshot: $(cat "$T/rec.err")"; return 1; }
}

# owner_after_deliveries_case PORT COOKIE_BY_SS: a socket made after
# udpdrop's first dump takes two datagrams (no drop) that top's and
# record's refreshes see, then drops 298 of 300 and closes after a
# refresh. Each view first knows it from those deliveries alone, then its
# drops come by a cookie the view's own dump never gave it (see the two
# tests). It is alive and held by its process when it drops: every view
# names its address and owner (comm, pid), after it closes too.
owner_after_deliveries_case() {
	local port=$1 by_ss=$2
	setup_hosts || return
	local l="$V4B:$port"
	local before=$(mib "$B" Udp RcvbufErrors)
	views_record_and_top "$B" || return
	start_doctor -N "$B" -d 600 || return
	start_recv "$B" "$l" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	# the cookie, made by a dump that is not udpdrop's
	if [[ $by_ss == yes ]]; then
		ip netns exec "$B" ss -uaeH "sport = :$port" 2>/dev/null | grep -q " sk:" ||
			{ fail "ss shows no cookie for $l"; return; }
	fi
	# two datagrams it queues (no drop), seen by top's and record's refreshes
	local sent=$(send "$A" "$l" -c 2 -s 100)
	top_refreshes 2 && record_snapshots "$T/v.data" 2 || return
	# now the drops, by that cookie; then the socket closes after a refresh
	sent=$((sent + $(send "$A" "$l" -c 300 -s 1000)))
	settle 1
	top_refreshes 2 && record_snapshots "$T/v.data" 2 || return
	local got=$(stop_recv "$rpid" "$rout")
	wait "$rpid" 2>/dev/null
	local dropped=$((sent - got))
	settle 1
	kill -INT "$DOC_PID"
	wait_doctor
	views_stop
	expect_gt dropped "$dropped" 0
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	# every row on the port, whatever address it shows
	local row=".sockets[] | select(.local // \"\" | endswith(\":$port\"))
		| \"\(.local) \(.drops) \(.comm) \(.pid)\""
	expect_eq "top: its row (local drops comm pid)" \
		"$(final "[$row] | join(\",\")")" "$l $dropped udptest $rpid"
	expect_eq "report JSON: its row (local drops comm pid)" \
		"$(vq "$T/v.json" "[$row] | join(\",\")")" "$l $dropped udptest $rpid"
	grep -qE "^  $l +[^ ]+ +$B +$rpid/udptest +$(commas "$dropped") " "$T/v.txt" ||
		fail "report text row: $(sed -n '/^Sockets/,/^$/p' "$T/v.txt")"
	expect_eq "doctor: its findings' owner" \
		"$(dq "[.findings[] | select(.local == \"$l\") | \"\(.comm) \(.pid)\"] | unique | join(\",\")")" \
		"udptest $rpid"
}

# The cookie made by another tool's dump (ss here; another udpdrop, or
# ss -e, in real life): each view learns the socket from deliveries by
# that cookie (no address, no inode, no owner), then drops by it.
test_views_owner_cookie_made_elsewhere() { owner_after_deliveries_case 5303 yes; }

# No cookie yet: the deliveries come by inode, and the view's own liveness
# check (lifetimes' dump) makes the cookie and names the socket (address,
# no owner); then its drops come by that cookie (iperf3's data sockets:
# the client's first datagram on each, then the test's).
test_views_owner_after_deliveries() { owner_after_deliveries_case 5304 no; }
