# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of `udpdrop report`: a real recording of a known drop
# pattern (as record.sh makes it), reported as text and JSON and checked
# against ground truth; then reported again by an unprivileged user, to show
# that no root (and no BPF) is needed. Sourced by run.sh.

# rq FILTER...: jq -r over the JSON report in $T/report.json.
rq() { jq -r "$@" "$T/report.json"; }

test_report_round_trip() {
	setup_hosts || return
	start_recv "$B" "$V4B:5041" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT ns rc i
	ns=$(ns_inode "$B")
	"$UDPDROP" record -N "$B" -o "$T/t.data" -d 3 -i 0.5 2>"$T/rec.err" &
	local rec=$!
	BG_PIDS+=("$rec")
	for ((i = 0; i < 100; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'recording UDP drops' "$T/rec.err" ||
		{ fail "udpdrop record did not start: $(cat "$T/rec.err")"; return; }
	local sent=$(send "$A" "$V4B:5041" -c 300 -s 1000)
	wait "$rec"
	expect_eq "record exit code" "$?" 0
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_gt dropped "$dropped" 0

	# text
	"$UDPDROP" report "$T/t.data" >"$T/report.txt" 2>"$T/report.err"
	rc=$?
	expect_eq "report exit code" "$rc" 0
	[[ -s $T/report.err ]] && fail "report wrote to stderr: $(cat "$T/report.err")"
	grep -qE "^  $V4B:5041 +$ns +$rpid/udptest +$(commas "$dropped") +[0-9,]+ +rcvbuf " "$T/report.txt" ||
		fail "no socket row with $dropped rcvbuf drops: $(cat "$T/report.txt")"
	grep -qE "^  $ns +rcvbuf +$(commas "$dropped") +$(commas "$dropped") +match " "$T/report.txt" ||
		fail "no rcvbuf reconciliation 'match' row: $(cat "$T/report.txt")"
	grep -q "^  file:      complete" "$T/report.txt" || fail "not said complete: $(head -n 5 "$T/report.txt")"

	# JSON
	"$UDPDROP" report --json "$T/t.data" >"$T/report.json"
	expect_eq "report --json exit code" "$?" 0
	jq -e . "$T/report.json" >/dev/null || { fail "report --json is not JSON"; return; }
	expect_eq "file.complete" "$(rq .file.complete)" true
	expect_eq "meta.kernel" "$(rq .meta.kernel)" "$(uname -r)"
	local sel=".sockets[] | select(.local == \"$V4B:5041\")"
	expect_eq "socket drops = sent - read" "$(rq "$sel | .drops")" "$dropped"
	expect_eq "socket cause" "$(rq "$sel | .cause")" rcvbuf
	expect_eq "socket netns" "$(rq "$sel | .netns")" "$ns"
	expect_eq "socket pid" "$(rq "$sel | .pid")" "$rpid"
	expect_eq "socket comm" "$(rq "$sel | .comm")" udptest
	expect_eq "socket reason" "$(rq "$sel | .reasons[0].name")" SOCKET_RCVBUFF
	expect_eq "totals.causes.rcvbuf.drops" "$(rq .totals.causes.rcvbuf.drops)" "$dropped"
	expect_eq "reconcile rcvbuf status" \
		"$(rq --argjson ns "$ns" '.reconcile[] | select(.netns == $ns and .cause == "rcvbuf") | .status')" match
	expect_eq "reconcile rcvbuf kernel" \
		"$(rq --argjson ns "$ns" '.reconcile[] | select(.netns == $ns and .cause == "rcvbuf") | .kernel')" "$dropped"

	# no root needed: the same report as nobody, from a copy it can read
	if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
		chmod 0755 "$T"
		cp "$T/t.data" "$T/pub.data"
		chmod 0644 "$T/pub.data"
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
			"$UDPDROP" report --json "$T/pub.data" >"$T/nobody.json" 2>"$T/nobody.err"
		expect_eq "report as nobody: exit" "$?" 0
		expect_eq "report as nobody: socket drops" \
			"$(jq -r "$sel | .drops" "$T/nobody.json")" "$dropped"
		# and its errors: a file it cannot read (the 0600 original), exit 1
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
			"$UDPDROP" report "$T/t.data" >/dev/null 2>"$T/nobody.err"
		expect_eq "report as nobody of a 0600 file: exit" "$?" 1
		grep -q "Permission denied" "$T/nobody.err" || fail "no 'Permission denied': $(cat "$T/nobody.err")"
	fi

	# cut short mid-block: reported, said so, exit 0
	head -c $(($(stat -c %s "$T/t.data") - 7)) "$T/t.data" >"$T/cut.data"
	"$UDPDROP" report "$T/cut.data" >"$T/cut.txt" 2>"$T/cut.err"
	expect_eq "cut short: exit" "$?" 0
	grep -q "CUT SHORT" "$T/cut.txt" || fail "cut short not said: $(head -n 5 "$T/cut.txt")"
	grep -q "cut short" "$T/cut.err" || fail "cut short not on stderr: $(cat "$T/cut.err")"

	# errors: missing file, not a trace, bad options
	"$UDPDROP" report "$T/none.data" >/dev/null 2>"$T/err"
	expect_eq "missing file: exit" "$?" 1
	echo "not a trace" >"$T/text.data"
	"$UDPDROP" report "$T/text.data" >/dev/null 2>"$T/err"
	expect_eq "not a trace: exit" "$?" 1
	grep -q "not a udpdrop trace" "$T/err" || fail "not a trace: $(cat "$T/err")"
	"$UDPDROP" report --top 0 "$T/t.data" >/dev/null 2>&1
	expect_eq "--top 0: exit" "$?" 2
	"$UDPDROP" report --bogus >/dev/null 2>&1
	expect_eq "unknown option: exit" "$?" 2
	return 0
}
