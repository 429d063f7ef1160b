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
	for ((i = 0; i < 200; i++)); do
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
	for ((i = 0; i < 200; i++)); do
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

# A socket whose owner runs in a Kubernetes pod (a fake one: fake_pod)
# is named by its pod in every view: top --json, doctor --json, and the
# recording's report (JSON and the advice's header), from the process's
# cgroup and the kubelet's log names, no Kubernetes API; a socket outside
# any pod has null pod keys.
test_views_pod() {
	setup_hosts || return
	local uid=0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f l="$V4B:5303" o="$V4B:5304"
	fake_pod "$uid" dns coredns-7f9c-x2v4q coredns || return
	start_recv "$B" "$l" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	echo "$rpid" >"$POD_SCOPE/cgroup.procs" || { fail "cannot move the receiver into $POD_SCOPE"; return; }
	start_recv "$B" "$o" --rcvbuf 4096 || return
	local opid=$RECV_PID oout=$RECV_OUT
	local before=$(mib "$B" Udp RcvbufErrors)
	start_record "$T/v.data" -N "$B" -i "$TOP_INTERVAL" --k8s-logs "$POD_LOGS" || return
	start_top -N "$B" --k8s-logs "$POD_LOGS" || return
	start_doctor -N "$B" -d 600 --k8s-logs "$POD_LOGS" || return
	send "$A" "$l" -c 300 -s 1000 >/dev/null
	send "$A" "$o" -c 200 -s 1000 >/dev/null
	settle 1.5
	local kernel=$(($(mib "$B" Udp RcvbufErrors) - before))
	local d=$(ss_drops "$B" 5303)
	kill -INT "$DOC_PID"
	wait_doctor
	views_stop
	stop_recv "$rpid" "$rout" >/dev/null
	stop_recv "$opid" "$oout" >/dev/null
	expect_gt "the pod's socket's drops (ss -uam d)" "$d" 0
	expect_eq "both sockets' drops = UdpRcvbufErrors delta" \
		"$(($(socket_field "$l" .drops) + $(socket_field "$o" .drops)))" "$kernel"
	local want="dns coredns-7f9c-x2v4q coredns $uid" none="null null null null"
	local pod='"\(.k8s_namespace) \(.k8s_pod) \(.k8s_container) \(.k8s_pod_uid)"'
	expect_eq "top: its drops = ss's" "$(socket_field "$l" .drops)" "$d"
	expect_eq "top: its pod" "$(socket_field "$l" " | $pod")" "$want"
	expect_eq "top: the other socket has none" "$(socket_field "$o" " | $pod")" "$none"
	local rsel=".sockets[] | select(.local == \"$l\")" osel=".sockets[] | select(.local == \"$o\")"
	expect_eq "report JSON: its drops" "$(vq "$T/v.json" "[$rsel][0].drops")" "$d"
	expect_eq "report JSON: its pod" "$(vq "$T/v.json" "[$rsel][0] | $pod")" "$want"
	expect_eq "report JSON: the other has none" "$(vq "$T/v.json" "[$osel][0] | $pod")" "$none"
	grep -q "^  $l  netns $B  $rpid/udptest  pod dns/coredns-7f9c-x2v4q (container coredns)" "$T/v.txt" ||
		fail "report text: no pod in the advice's header: $(grep "^  $l  netns" "$T/v.txt")"
	local dsel=".findings[] | select(.local == \"$l\" and .cause == \"rcvbuf\")"
	expect_eq "doctor: its drops" "$(dq "[$dsel][0].drops")" "$d"
	expect_eq "doctor: its pod" "$(dq "[$dsel][0] | $pod")" "$want"
	expect_eq "doctor: the other has none" \
		"$(dq "[.findings[] | select(.local == \"$o\")][0] | $pod")" "$none"
}

# A socket with two causes gets the same advice in every view: 300
# datagrams of 1000 B into a 4 KiB buffer nobody reads (rcvbuf drops, and
# a few queued), then the receiver is killed (its queue: socket_close
# drops). Each view sizes the buffer from the average datagram of the
# rcvbuf drops alone: top and doctor once took the row's average, or
# none for a row of two causes, and told the socket two sizes (CI, an
# iperf3 server that closed with 2 datagrams queued).
test_views_two_causes_one_advice() {
	setup_hosts || return
	start_recv "$B" "$V4B:5303" --rcvbuf 4096 || return
	local rpid=$RECV_PID
	local r0=$(mib "$B" Udp RcvbufErrors)
	apps_start "$B" || return
	local sent=$(send "$A" "$V4B:5303" -c 300 -s 1000)
	settle 0.5
	local queued=$(ip netns exec "$B" ss -uamnH "sport = :5303" |
		sed -n 's/.*skmem:(r\([0-9]*\),.*/\1/p')
	{ kill -KILL "$rpid" && wait "$rpid"; } 2>/dev/null
	settle 1.5
	apps_stop || return
	local kernel=$(($(mib "$B" Udp RcvbufErrors) - r0))
	expect_eq sent "$sent" 300
	expect_gt "kernel rcvbuf drops" "$kernel" 0
	expect_gt "bytes queued at the kill" "${queued:-0}" 0
	for v in top report doctor; do
		expect_eq "$v's rcvbuf drops on port 5303 = the kernel's" "$(apps_rcvbuf 5303 "$v")" "$kernel"
	done
	expect_eq "top: socket_close drops = sent - rcvbuf drops" \
		"$(final '[.sockets[] | select(.local | endswith(":5303")) | .causes.socket_close // 0] | add')" \
		"$((sent - kernel))"
	expect_eq "top: the rcvbuf finding's verdict" \
		"$(final -r '[.sockets[] | select(.local | endswith(":5303")) | .advice[] | select(.cause == "rcvbuf") | .verdict] | join(",")')" \
		bursts
	views_agree 5303
}

# A process's two sockets on one port (SO_REUSEPORT, each connected to its
# own peer), each dropping its own burst: one setting of the application
# sizes both (unbound's so-rcvbuf), so every view gives both sockets the
# one buffer the larger burst needs, and says why on the smaller's.
test_views_one_buffer_per_process_port() {
	setup_hosts || return
	start_recv "$B" "$V4B:5304" --rcvbuf 4096 --reuseport 2 --peer "$V4A:41000" || return
	local rpid=$RECV_PID
	local r0=$(mib "$B" Udp RcvbufErrors)
	apps_start "$B" || return
	local s1=$(send "$A" "$V4B:5304" -c 300 -s 1000 --sport 41000)
	local s2=$(send "$A" "$V4B:5304" -c 60 -s 1000 --sport 41001)
	settle 1.5
	apps_stop || return
	local kernel=$(($(mib "$B" Udp RcvbufErrors) - r0))
	expect_eq sent "$s1 $s2" "300 60"
	for v in top report doctor; do
		expect_eq "$v's rcvbuf drops on port 5304 = the kernel's" "$(apps_rcvbuf 5304 "$v")" "$kernel"
	done
	local sel='[.sockets[] | select(.local | endswith(":5304")) | {drops, f: (.advice[] | select(.cause == "rcvbuf"))}] | sort_by(.drops)'
	expect_eq "top: rcvbuf findings on port 5304" "$(final "$sel | length")" 2
	expect_eq "top: the two sockets' drops differ" "$(final "$sel | (.[0].drops < .[1].drops)")" true
	expect_eq "top: one buffer value for both" "$(final -c "$sel | map([.f.setting, .f.value]) | unique | length")" 1
	final -r "$sel | .[0].f.change" | grep -q "one setting sizes them all" ||
		fail "top: the smaller socket's change does not say why: $(final -r "$sel | .[0].f.change")"
	if final -r "$sel | .[1].f.change" | grep -q "one setting sizes them all"; then
		fail "top: the larger socket's own need is the value, not a sibling's: $(final -r "$sel | .[1].f.change")"
	fi
	views_agree 5304
}
