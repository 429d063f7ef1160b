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
