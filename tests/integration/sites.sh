# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kernels without drop reasons (5.10 to 5.16): causes derived from the
# drop locations. UDPDROP_NO_DROP_REASONS=1 makes udpdrop act so on any
# kernel (the reason argument is not read), so these run the derivation on
# the host as on a 5.10 guest (tests/kernels/). Sourced by run.sh; each
# count is checked against the kernel's own counter, exactly.

# sites_top ARGS...: start_top without drop reasons.
sites_top() { UDPDROP_NO_DROP_REASONS=1 start_top "$@"; }

# What every run without reasons says about itself.
expect_sites_json() {
	expect_eq "causes_from" "$(final .causes_from)" location
	expect_eq "socket_filter said to be a guess" \
		"$(final '.causes_guessed.socket_filter != null')" true
	expect_eq "xdp said not known" "$(final '.causes_unknown | index("xdp") != null')" true
}

test_sites_rcvbuf() {
	local sent got dropped
	setup_hosts || return
	start_recv "$B" "$V4B:5101" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp RcvbufErrors)
	sites_top -N "$B" || return
	sent=$(send "$A" "$V4B:5101" -c 300 -s 1000)
	settle
	local d=$(ss_drops "$B" 5101)
	stop_top || return
	got=$(stop_recv "$rpid" "$rout")
	dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_gt dropped "$dropped" 0
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - before))" "$dropped"
	expect_eq "ss -uam d" "$d" "$dropped"
	expect_eq "socket cause rcvbuf" "$(socket_field "$V4B:5101" .causes.rcvbuf)" "$dropped"
	expect_eq "site udp_enqueue:rcvbuf" \
		"$(socket_field "$V4B:5101" '.reasons["udp_enqueue:rcvbuf"]')" "$dropped"
	expect_eq "totals.drops" "$(final .totals.drops)" "$dropped"
	expect_eq "totals.attributed" "$(final .totals.attributed)" "$dropped"
	expect_eq "reconcile rcvbuf" \
		"$(final '[.reconcile[] | select(.cause == "rcvbuf")][0] | "\(.kernel) \(.udpdrop)"')" "$dropped $dropped"
	expect_sites_json
}

test_sites_no_socket() {
	setup_hosts || return
	local before=$(mib "$B" Udp NoPorts)
	sites_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5999" -c 50)
	settle
	stop_top || return
	expect_eq sent "$sent" 50
	expect_eq "UdpNoPorts delta" "$(($(mib "$B" Udp NoPorts) - before))" 50
	expect_eq "unattributed no_socket drops" \
		"$(final "[.unattributed[] | select(.cause == \"no_socket\" and .flow == \"$V4A -> $V4B:5999\")][0].drops")" 50
	expect_eq "reconcile no_socket" \
		"$(final '[.reconcile[] | select(.cause == "no_socket")][0] | "\(.kernel) \(.udpdrop)"')" "50 50"
	expect_eq "totals.drops" "$(final .totals.drops)" 50
}

# Small datagrams (the checksum is checked on arrival) and large ones
# (checked when read, in udp_recvmsg): both sites.
test_sites_checksum() {
	setup_hosts || return
	start_recv "$B" "$V4B:5103" --read || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp InCsumErrors)
	sites_top -N "$B" || return
	local small=$(send "$A" "$V4B:5103" -c 20 -s 20 --bad-csum --src "$V4A")
	local large=$(send "$A" "$V4B:5103" -c 20 -s 1000 --bad-csum --src "$V4A")
	settle 1
	local d=$(ss_drops "$B" 5103)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq sent "$((small + large))" 40
	expect_eq "read by the app" "$got" 0
	expect_eq "UdpInCsumErrors delta" "$(($(mib "$B" Udp InCsumErrors) - before))" 40
	expect_eq "socket cause checksum" "$(socket_field "$V4B:5103" .causes.checksum)" 40
	expect_eq "totals.causes.checksum" "$(final .totals.causes.checksum)" 40
	expect_eq "reconcile checksum" \
		"$(final '[.reconcile[] | select(.cause == "checksum")][0] | "\(.kernel) \(.udpdrop)"')" "40 40"
}

test_sites_frag_timeout() { frag_timeout_case 5105 sites_top; }

test_sites_socket_filter() {
	setup_hosts || return
	start_recv "$B" "$V4B:5106" --filter-drop || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local before=$(mib "$B" Udp InErrors)
	sites_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5106" -c 40)
	settle
	local d=$(ss_drops "$B" 5106)
	stop_top || return
	local got=$(stop_recv "$rpid" "$rout")
	expect_eq "read by the app" "$got" 0
	expect_eq "UdpInErrors delta" "$(($(mib "$B" Udp InErrors) - before))" 40
	expect_eq "ss -uam d" "$d" 40
	expect_eq "socket cause socket_filter" "$(socket_field "$V4B:5106" .causes.socket_filter)" 40
	expect_eq "totals.drops" "$(final .totals.drops)" 40
}

test_sites_socket_close() {
	setup_hosts || return
	start_recv "$B" "$V4B:5107" --rcvbuf 1000000 || return
	local rpid=$RECV_PID
	sites_top -N "$B" || return
	local sent=$(send "$A" "$V4B:5107" -c 25 -s 200)
	settle
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	wait_close_drops 25 # purged from an RCU callback: wait, don't guess
	stop_top || return
	expect_eq sent "$sent" 25
	expect_eq "socket_close drops" "$(socket_field "$V4B:5107" .causes.socket_close)" 25
	expect_eq "totals.drops" "$(final .totals.drops)" 25
}

# Kernels without drop reasons (5.10-5.16) count drop windows too: the
# site-derivation program closes a window through a global function the
# verifier checks once (udpdrop_win_flush), where the static one it
# replaced took that program past the verifier's million instructions and
# the windows were left off there. top, record + report and doctor then
# judge one run by the same windows, as on 5.17+ (before: drop_windows null
# in every view, each judging by its own intervals).
test_sites_advice_windows_one_run() {
	export UDPDROP_NO_DROP_REASONS=1
	test_advice_windows_one_run
	# (read into a variable: a matrix guest has no /dev/fd for <(...))
	local said
	said=$("$UDPDROP" top -b -n 1 -i 0.1 -v 2>&1 >/dev/null)
	[[ $said == *"causes from drop locations"* ]] ||
		fail "UDPDROP_NO_DROP_REASONS did not make top derive causes from locations"
}

# The text view says where its causes came from.
test_sites_text() {
	setup_hosts || return
	local out
	out=$(UDPDROP_NO_DROP_REASONS=1 "$UDPDROP" top -b -n 1 -i 0.2 -N "$B" 2>/dev/null)
	[[ $out == *"causes derived from drop locations"* ]] ||
		fail "top -b does not say how causes were derived: '$out'"
	out=$(UDPDROP_NO_DROP_REASONS=1 "$UDPDROP" top -b -n 1 -i 0.2 -N "$B" -v 2>&1 >/dev/null)
	[[ $out == *"drop reasons (5.17+) "* && $out == *"causes from drop locations"* ]] ||
		fail "top -v does not show the kernel's features and the derivation: '$out'"
	# the full-screen view says it too (its own tmux server inherits this)
	export UDPDROP_NO_DROP_REASONS=1
	tui_start 200 30 -N "$B" || return
	tui_wait 'causes derived from drop locations' 50 ||
		fail "the full-screen view does not say how causes were derived: $(tui_screen | head -6)"
	tui_keys q
	expect_eq "full-screen exit" "$(tui_exit)" 0
}

# Below 5.10: one line naming the minimum, exit 4, nothing loaded.
test_sites_kernel_too_old() {
	local out rc
	out=$(UDPDROP_KERNEL_RELEASE=5.4.0-150-generic "$UDPDROP" top -b -n 1 -i 0.2 2>&1 >/dev/null)
	rc=$?
	expect_eq "5.4: exit" "$rc" 4
	expect_eq "5.4: one line" "$(wc -l <<<"$out")" 1
	[[ $out == *"Linux 5.10 or later needed, this is 5.4.0-150-generic"* ]] ||
		fail "5.4: message does not name the minimum: '$out'"
}

# The first fragment never came, without drop reasons (the timer's purge
# told by its site): top and record, each one datagram in netns B.
test_sites_frag_timeout_no_head() { UDPDROP_NO_DROP_REASONS=1 test_frag_timeout_no_head; }
test_sites_frag_timeout_first_dropped() { UDPDROP_NO_DROP_REASONS=1 test_frag_timeout_first_dropped; }
