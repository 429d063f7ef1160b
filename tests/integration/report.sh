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
	"$UDPDROP" record -N "$B" -o "$T/t.data" -d 600 -i 0.5 2>"$T/rec.err" &
	local rec=$! i
	BG_PIDS+=("$rec")
	for ((i = 0; i < 100; i++)); do
		grep -q 'recording UDP drops' "$T/rec.err" && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'recording UDP drops' "$T/rec.err" ||
		{ fail "udpdrop record did not start: $(cat "$T/rec.err")"; return; }
	run_gen "$V4B:5045" --count 3000 --pps 1000 --size 256 || return
	wait_sink || return
	kill -INT "$rec"
	wait "$rec"
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
