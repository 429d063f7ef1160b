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

# rcvbuf: a receiver that never reads, a tiny buffer; record -N B for 3 s.
test_record_rcvbuf() {
	[[ -x $TRACECAT ]] || { fail "build first: make $TRACECAT"; return; }
	setup_hosts || return
	start_recv "$B" "$V4B:5031" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT ns
	ns=$(ns_inode "$B")
	local before=$(mib "$B" Udp RcvbufErrors)
	"$UDPDROP" record -N "$B" -o "$T/t.data" -d 3 -i 0.5 2>"$T/rec.err" &
	local rec=$! i rc
	BG_PIDS+=("$rec")
	for ((i = 0; i < 100; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'recording UDP drops' "$T/rec.err" ||
		{ fail "udpdrop record did not start: $(cat "$T/rec.err")"; return; }
	local sent=$(send "$A" "$V4B:5031" -c 300 -s 1000)
	wait "$rec"
	rc=$?
	expect_eq "record exit code" "$rc" 0
	local got=$(stop_recv "$rpid" "$rout")
	local dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_gt dropped "$dropped" 0
	expect_eq "UdpRcvbufErrors delta (live)" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	grep -qE "^udpdrop record: $(commas "$dropped") drops in [0-9.]+ s written to $T/t.data \([0-9.]+ [KM]?i?B\)$" "$T/rec.err" ||
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
	expect_eq "REASONS has SOCKET_RCVBUFF" \
		"$(tq '[.[] | select(.type == "REASONS") | .reasons | has("SOCKET_RCVBUFF")] | any')" true
	expect_eq "IFACES of B has veth0" \
		"$(tq --argjson ns "$ns" '[.[] | select(.type == "IFACES") | .ifaces[] | select(.name == "veth0" and .netns == $ns)] | length')" 1

	# the receiver socket, as the last SOCKETS saw it
	local cookie=$(tq '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.lport == 5031) | .cookie')
	expect_gt "receiver cookie" "${cookie:-x}" 0
	expect_eq "receiver comm" "$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.cookie == $c) | .comm')" udptest
	expect_eq "receiver pid" "$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "SOCKETS")][-1].sockets[] | select(.cookie == $c) | .pid')" "$rpid"
	expect_eq "last COUNTS for the socket = sent - read" \
		"$(tq --argjson c "${cookie:-0}" '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.cookie == $c) | .datagrams) | add // 0')" "$dropped"
	local rv=$(tq '[.[] | select(.type == "REASONS")][-1].reasons.SOCKET_RCVBUFF')
	expect_eq "last COUNTS with reason SOCKET_RCVBUFF = sent - read" \
		"$(tq --argjson r "$rv" '[.[] | select(.type == "COUNTS")][-1].counts | map(select(.reason == $r) | .datagrams) | add // 0')" "$dropped"
	expect_eq "first COUNTS empty" "$(tq '[.[] | select(.type == "COUNTS")][0].counts | length')" 0
	expect_eq "MIB UdpRcvbufErrors last - first" \
		"$(tq --argjson ns "$ns" '[.[] | select(.type == "MIB" and .netns == $ns)] | .[-1].counters.UdpRcvbufErrors - .[0].counters.UdpRcvbufErrors')" "$dropped"
	expect_eq "MIB only for B" "$(tq --argjson ns "$ns" '[.[] | select(.type == "MIB" and .netns != $ns)] | length')" 0
	expect_eq "SYMBOLS name the locations" \
		"$(tq '([.[] | select(.type == "SYMBOLS") | .symbols | keys[]] | unique) as $s |
			[.[] | select(.type == "COUNTS") | .counts[] | .location] | unique | all(. as $l | $s | any(. == $l))')" true
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

	# -f overwrites, and the result is a whole trace
	"$UDPDROP" record -f -o "$T/exists.data" -d 0.5 2>"$T/err"
	expect_eq "-f: exit" "$?" 0
	expect_eq "-f: file mode" "$(stat -c %a "$T/exists.data")" 600
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
