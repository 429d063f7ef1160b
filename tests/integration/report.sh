# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Integration tests of `udpdrop report`: a real recording of a known drop
# pattern (as record.sh makes it), reported as text and JSON and checked
# against ground truth; then reported again by an unprivileged user, to show
# that no root (and no BPF) is needed. Sourced by run.sh.

# rq FILTER...: jq -r over the JSON report in $T/report.json.
rq() { jq -r "$@" "$T/report.json"; }

# The socket is connected to its sender's port: the REMOTE column, as top's;
# the netns by its name, as top shows it (record writes the names).
test_report_round_trip() {
	setup_hosts || return
	start_recv "$B" "$V4B:5041" --rcvbuf 4096 --connect "$V4A:5042" || return
	local rpid=$RECV_PID rout=$RECV_OUT ns rc i
	ns=$(ns_inode "$B")
	# stopped by SIGINT once the datagrams are in (see record_rcvbuf)
	"$UDPDROP" record -N "$B" -o "$T/t.data" -d 600 -i 0.5 2>"$T/rec.err" &
	local rec=$!
	BG_PIDS+=("$rec")
	for ((i = 0; i < 600; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'recording UDP drops' "$T/rec.err" ||
		{ fail "udpdrop record did not start: $(cat "$T/rec.err")"; return; }
	local sent=$(send "$A" "$V4B:5041" -c 300 -s 1000 --sport 5042)
	settle
	kill -INT "$rec"
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
	grep -qE '^  LOCAL +REMOTE +NETNS +PID/COMM +DROPS +SKBS +CAUSE +RCVBUF$' "$T/report.txt" ||
		fail "no REMOTE column: $(grep -A2 '^Sockets' "$T/report.txt")"
	grep -qE "^  $V4B:5041 +$V4A:5042 +$B +$rpid/udptest +$(commas "$dropped") +[0-9,]+ +rcvbuf " "$T/report.txt" ||
		fail "no socket row with $dropped rcvbuf drops: $(cat "$T/report.txt")"
	grep -qE "^  $B +rcvbuf +$(commas "$dropped") +$(commas "$dropped") +match " "$T/report.txt" ||
		fail "no rcvbuf reconciliation 'match' row: $(cat "$T/report.txt")"
	grep -q "^  file:      complete" "$T/report.txt" || fail "not said complete: $(head -n 5 "$T/report.txt")"
	grep -qx "  filters:   netns $B (inode $ns), port any" "$T/report.txt" ||
		fail "filters line without the netns name: $(grep filters: "$T/report.txt")"

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
	expect_eq "socket netns_name" "$(rq "$sel | .netns_name")" "$B"
	expect_eq "socket remote" "$(rq "$sel | .remote")" "$V4A:5042"
	expect_eq "socket pid" "$(rq "$sel | .pid")" "$rpid"
	expect_eq "socket comm" "$(rq "$sel | .comm")" udptest
	expect_eq "socket reason" "$(rq "$sel | .reasons[0].name")" "$(rcvbuf_reason)"
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

# report --pcap's OUT named as a character device (a stand-in for /dev/null
# made here), a symlink to /proc/self/fd/1, a FIFO with and without a
# reader, an existing file, a directory and a block device: written
# through or in place, or refused; never chmod'ed, replaced or removed, and
# never a hang. node() is record.sh's.
test_report_pcap_targets() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	local F=$ROOT/tests/fixtures/shed.data f rc before i
	"$UDPDROP" report --pcap "$T/ref.pcapng" "$F" 2>"$T/err" ||
		{ fail "the reference export: $(cat "$T/err")"; return; }
	expect_eq "a new OUT: mode" "$(stat -c %a "$T/ref.pcapng")" 600

	# a character device: written through, -f or not, node unchanged
	mknod -m 666 "$T/null" c 1 3 || { fail "mknod"; return; }
	before=$(node "$T/null")
	for f in -f ""; do
		"$UDPDROP" report $f --pcap "$T/null" "$F" 2>"$T/err"
		expect_eq "char device ${f:-without -f}: exit" "$?" 0
		expect_eq "char device ${f:-without -f}: node unchanged (mode 666)" "$(node "$T/null")" "$before"
	done

	# a symlink to standard output (a pipe): the packets reach the pipe,
	# the link stays a link
	ln -s /proc/self/fd/1 "$T/stdout"
	"$UDPDROP" report -f --pcap "$T/stdout" "$F" 2>"$T/err" | cat >"$T/piped.pcapng"
	expect_eq "symlink to a pipe: exit" "${PIPESTATUS[0]}" 0
	expect_eq "symlink kept" "$(stat -c %N "$T/stdout")" "'$T/stdout' -> '/proc/self/fd/1'"
	cmp -s "$T/ref.pcapng" "$T/piped.pcapng" || fail "through the symlink: not the pcapng a file gets"

	# a FIFO: without a reader one line, exit 1, at once, the FIFO kept;
	# with one, the reader gets the pcapng
	mkfifo -m 644 "$T/fifo"
	before=$(node "$T/fifo")
	timeout 20 "$UDPDROP" report -f --pcap "$T/fifo" "$F" 2>"$T/err"
	expect_eq "FIFO without a reader: exit" "$?" 1
	expect_eq "FIFO without a reader: the line" "$(cat "$T/err")" \
		"udpdrop report: $T/fifo is a FIFO with no reader: start the reader first"
	expect_eq "FIFO without a reader: FIFO unchanged" "$(node "$T/fifo")" "$before"
	timeout 60 cat "$T/fifo" >"$T/fifo.pcapng" &
	local reader=$!
	BG_PIDS+=("$reader")
	for ((i = 0; i < 100; i++)); do # until cat is in its open()
		"$UDPDROP" report --pcap "$T/fifo" "$F" 2>"$T/err"
		rc=$?
		((rc == 1)) && grep -q 'with no reader' "$T/err" || break
		sleep 0.1
	done
	expect_eq "FIFO with a reader: exit" "$rc" 0
	wait "$reader"
	expect_eq "FIFO with a reader: FIFO unchanged" "$(node "$T/fifo")" "$before"
	cmp -s "$T/ref.pcapng" "$T/fifo.pcapng" || fail "the FIFO's reader did not get the pcapng"

	# an existing file: refused without -f; with it, written in place,
	# its mode and inode kept
	echo precious >"$T/old.pcapng"
	chmod 0640 "$T/old.pcapng"
	local ino=$(stat -c %i "$T/old.pcapng")
	"$UDPDROP" report --pcap "$T/old.pcapng" "$F" 2>"$T/err"
	expect_eq "existing without -f: exit" "$?" 2
	expect_eq "existing without -f: untouched" "$(cat "$T/old.pcapng")" precious
	"$UDPDROP" report -f --pcap "$T/old.pcapng" "$F" 2>"$T/err"
	expect_eq "existing with -f: exit" "$?" 0
	expect_eq "existing with -f: mode and inode kept" "$(stat -c '%a %i' "$T/old.pcapng")" "640 $ino"
	cmp -s "$T/ref.pcapng" "$T/old.pcapng" || fail "existing with -f: not the pcapng"
	# a trace that does not read back never touches OUT
	echo "not a trace" >"$T/bad.data"
	echo precious >"$T/old.pcapng"
	"$UDPDROP" report -f --pcap "$T/old.pcapng" "$T/bad.data" 2>"$T/err"
	expect_eq "bad trace: exit" "$?" 1
	expect_eq "bad trace: OUT untouched" "$(cat "$T/old.pcapng")" precious
	"$UDPDROP" report --pcap "$T/new.pcapng" "$T/bad.data" 2>"$T/err"
	[[ -e $T/new.pcapng ]] && fail "bad trace: a new OUT was left"

	# refused, -f or not, exit 2, one line naming what to do
	mkdir "$T/dir"
	mknod -m 600 "$T/blk" b 240 0 # a major for local use: no driver behind it
	local what
	for what in dir:"is a directory: name a file in it" \
		blk:"is a block device, which udpdrop never writes to: name a regular file"; do
		before=$(node "$T/${what%%:*}")
		"$UDPDROP" report -f --pcap "$T/${what%%:*}" "$F" 2>"$T/err"
		expect_eq "${what%%:*}: exit" "$?" 2
		expect_eq "${what%%:*}: the line" "$(cat "$T/err")" "udpdrop report: $T/${what%%:*} ${what#*:}"
		expect_eq "${what%%:*}: unchanged" "$(node "$T/${what%%:*}")" "$before"
	done
	expect_eq "nothing else left behind" "$(cd "$T" && ls | sort | tr '\n' ' ')" \
		"bad.data blk dir err fifo fifo.pcapng null old.pcapng piped.pcapng ref.pcapng stdout "
}

# A full disk (a 64 KiB tmpfs filled first): exit 1, one line; a new OUT is
# not left behind, an existing one given with -f is left empty (its old
# content was overwritten; a part of the new one would pass for whole),
# never removed, its mode kept.
test_report_pcap_full_disk() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap 'umount "$T/mnt" 2>/dev/null; cleanup' EXIT
	local F=$ROOT/tests/fixtures/shed.data
	mkdir "$T/mnt"
	mount -t tmpfs -o size=64k,mode=0755 udpdrop-test "$T/mnt" || { fail "mount tmpfs"; return; }
	: >"$T/mnt/old.pcapng" # empty: emptying it frees no room
	chmod 0640 "$T/mnt/old.pcapng"
	dd if=/dev/zero of="$T/mnt/fill" bs=4k 2>/dev/null
	"$UDPDROP" report --pcap "$T/mnt/new.pcapng" "$F" 2>"$T/err"
	expect_eq "full disk: exit" "$?" 1
	expect_eq "full disk: the line" "$(cat "$T/err")" \
		"udpdrop report: cannot write $T/mnt/new.pcapng: No space left on device: no pcapng written"
	"$UDPDROP" report -f --pcap "$T/mnt/old.pcapng" "$F" 2>"$T/err"
	expect_eq "full disk, -f: exit" "$?" 1
	expect_eq "full disk, -f: the line" "$(cat "$T/err")" \
		"udpdrop report: cannot write $T/mnt/old.pcapng: No space left on device: the file is left empty"
	expect_eq "full disk, -f: kept, empty, mode kept" "$(stat -c '%s %a' "$T/mnt/old.pcapng")" "0 640"
	expect_eq "full disk: nothing else left" "$(ls "$T/mnt" | tr '\n' ' ')" "fill old.pcapng "
	umount "$T/mnt"
}

# The settings' scope travels in the recording (META sysctl_host_wide,
# sysctl_per_netns, sysctl_settable, sysctl_netns_name), so report's advice
# for a socket at the default buffer in B gives the host's command, as top
# and doctor do (issue 13, 3), not a sysctl -w that fails inside B.
test_report_settings_scope() {
	setup_hosts || return
	start_sink "$V4B:5045" --no-tracer --stall 300 --every 1000 || return
	start_record "$T/t.data" -N "$B" -d 600 -i 0.5 || return
	run_gen "$V4B:5045" --count 3000 --pps 1000 --size 256 || return
	wait_sink || return
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	"$UDPDROP" report --json "$T/t.data" >"$T/report.json" || { fail "report --json failed"; return; }
	"$UDPDROP" report "$T/t.data" >"$T/report.txt" || { fail "report failed"; return; }
	expect_eq "META: rmem_default host-wide" \
		"$(rq '.meta.sysctl_host_wide | split(",") | index("net.core.rmem_default") != null')" true
	expect_eq "META: ipfrag_time per-netns" \
		"$(rq '.meta.sysctl_per_netns | split(",") | index("net.ipv4.ipfrag_time") != null')" true
	expect_eq "META: ipfrag_time settable in B" \
		"$(rq '.meta.sysctl_settable | split(",") | index("net.ipv4.ipfrag_time") != null')" true
	expect_eq "META: rmem_default not settable in B" \
		"$(rq '.meta.sysctl_settable | split(",") | index("net.core.rmem_default") == null')" true
	expect_eq "META: the netns's name" "$(rq .meta.sysctl_netns_name)" "$B"
	local f='[.advice[] | select(.cause == "rcvbuf" and .setting == "net.core.rmem_default")][0]'
	expect_eq "advice: scope" "$(rq "$f.setting_scope")" host-wide
	expect_eq "advice: run on" "$(rq "$f.setting_run_on")" host
	expect_eq "advice: command" "$(rq "$f.setting_command")" "sysctl -w net.core.rmem_default=$(rq "$f.value")"
	rq "$f.change" | grep -qF "on the host (net.core.rmem_default is host-wide: one value for every netns, read-only in netns $B" ||
		fail "the change does not say where: $(rq "$f.change")"
	# (the text wraps: joined first)
	tr -s ' \n' ' ' <"$T/report.txt" | grep -qF "on the host (net.core.rmem_default is host-wide" ||
		fail "the text does not say where: $(grep -A3 change "$T/report.txt")"
}

# A kernel tunnel: B has a VXLAN device (VNI 42, port 4789), whose UDP
# socket the kernel opens (no process holds it); A sends 100 frames
# encapsulated with VNI 43, which B has no device for: the kernel drops
# each at that socket (VXLAN_VNI_NOT_FOUND, in vxlan_rcv, with no socket
# named: the model matches the flow to it). top, the report of a
# recording of the same run and doctor must put them on that one socket,
# named after its device, with the cause tunnel; the counts equal what was
# sent and the kernel's UdpInDatagrams (the tunnel socket took them, then
# refused them). The report's text shows the REMOTE column and the netns
# by its name, as top does.
test_report_kernel_tunnel() {
	setup_hosts || return
	local id=$((RANDOM % 200 + 20))
	ip netns exec "$B" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
	ip netns exec "$A" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
	ip -n "$B" link add vxlan0 type vxlan id 42 dstport 4789 local "$V4B" dev veth0 &&
	ip -n "$B" addr add "192.168.$id.2/24" dev vxlan0 &&
	ip -n "$B" link set vxlan0 up &&
	ip -n "$A" link add vxlan43 type vxlan id 43 dstport 4789 remote "$V4B" local "$V4A" dev veth0 &&
	ip -n "$A" addr add "192.168.$id.1/24" dev vxlan43 &&
	ip -n "$A" link set vxlan43 up &&
	ip -n "$A" neigh add "192.168.$id.2" lladdr 02:00:00:00:00:42 dev vxlan43 nud permanent ||
		{ fail "cannot build the VXLAN devices"; return; }
	local in0=$(mib "$B" Udp InDatagrams)
	start_top -N "$B" || return
	# and top's text, beside its JSON
	"$UDPDROP" top --batch -N "$B" -i 0.5 >"$T/top.txt" 2>"$T/top-text.err" &
	local toptext=$! i
	BG_PIDS+=("$toptext")
	for ((i = 0; i < 600; i++)); do
		grep -q 'tracing UDP drops' "$T/top-text.err" && break
		kill -0 "$toptext" 2>/dev/null || break
		sleep 0.1
	done
	start_record "$T/v.data" -N "$B" -i 0.5 || return
	start_doctor -N "$B" -d 600 || return
	tui_start 160 30 -N "$B" -i 0.5 || return
	local sent=$(send "$A" "192.168.$id.2:7000" -c 100 -s 100)
	expect_eq sent "$sent" 100
	settle 1.5
	local owner="kernel vxlan vxlan0 vni 42"
	# the live view: the row, then its detail (Enter), then q
	tui_wait "\\*:4789 .* $owner .* $sent tunnel" ||
		fail "TUI: no row *:4789 '$owner' $sent tunnel: $(tui_screen)"
	tui_keys Enter
	tui_wait "owner +$owner  cookie" || fail "TUI detail: no owner line: $(tui_screen)"
	tui_keys q
	expect_eq "TUI exit code" "$(tui_exit)" 0
	kill -INT "$DOC_PID"
	wait_doctor
	kill -INT "$REC"
	wait "$REC"
	expect_eq "record exit code" "$?" 0
	stop_top || return
	kill -INT "$toptext"
	wait "$toptext"
	expect_eq "top text exit code" "$?" 0
	expect_eq "UdpInDatagrams delta (the tunnel socket's)" "$(($(mib "$B" Udp InDatagrams) - in0))" "$sent"

	local sel='.sockets[] | select(.local == "*:4789")'
	# top
	expect_eq "top: the socket row" "$(final -c "[$sel | {kernel_owner, pid, cause, drops, causes, reasons, netns_name}]")" \
		"[{\"kernel_owner\":\"$owner\",\"pid\":null,\"cause\":\"tunnel\",\"drops\":$sent,\"causes\":{\"tunnel\":$sent},\"reasons\":{\"VXLAN_VNI_NOT_FOUND\":$sent},\"netns_name\":\"$B\"}]"
	expect_eq "top: no socketless flow" "$(final '[.unattributed[]?] | length')" 0
	grep -qE "^udp +\*:4789 +\* +$B +$owner +.* $sent +tunnel " "$T/top.txt" ||
		fail "top text: no row *:4789 * $B '$owner' $sent tunnel: $(tail -n 30 "$T/top.txt")"
	# report, JSON and text
	"$UDPDROP" report --json "$T/v.data" >"$T/report.json" 2>"$T/report.err"
	expect_eq "report --json exit" "$?" 0
	expect_eq "report: the socket row" "$(rq -c "[$sel | {kernel_owner, pid, cause, drops, causes, netns_name, remote}]")" \
		"[{\"kernel_owner\":\"$owner\",\"pid\":null,\"cause\":\"tunnel\",\"drops\":$sent,\"causes\":{\"tunnel\":$sent},\"netns_name\":\"$B\",\"remote\":\"*\"}]"
	expect_eq "report: the socket's reason" "$(rq -c "[$sel | .reasons[] | {name, drops}]")" \
		"[{\"name\":\"VXLAN_VNI_NOT_FOUND\",\"drops\":$sent}]"
	expect_eq "report: no socketless flow" "$(rq '.unattributed | length')" 0
	expect_eq "report: the same cookie as top" "$(rq "$sel | .cookie")" "$(final "$sel | .cookie")"
	"$UDPDROP" report "$T/v.data" >"$T/report.txt" 2>"$T/report.err"
	expect_eq "report exit" "$?" 0
	grep -qE '^  LOCAL +REMOTE +NETNS +PID/COMM +DROPS +SKBS +CAUSE +RCVBUF$' "$T/report.txt" ||
		fail "report: no REMOTE column: $(grep -A3 '^Sockets' "$T/report.txt")"
	grep -qE "^  \*:4789 +\* +$B +$owner +$sent +$sent +tunnel " "$T/report.txt" ||
		fail "report: no row *:4789 * $B '$owner' $sent tunnel: $(grep -A3 '^Sockets' "$T/report.txt")"
	grep -q "^  \*:4789  netns $B  $owner: tunnel, $sent datagrams" "$T/report.txt" ||
		fail "report: advice header: $(grep -A2 '^Advice' "$T/report.txt")"
	# doctor
	expect_eq "doctor: the finding" \
		"$(dq -c '[.findings[] | select(.cause == "tunnel") | {local, kernel_owner, drops}]')" \
		"[{\"local\":\"*:4789\",\"kernel_owner\":\"$owner\",\"drops\":$sent}]"
	expect_eq "doctor: no other finding" "$(dq '[.findings[] | select(.cause != "tunnel")] | length')" 0
	# and the check every real-application scenario gets (apps.sh)
	APPS_DOC=$T/doc.json views_agree 4789
}
