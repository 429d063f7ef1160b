# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make static's udpdrop-static: one file that needs nothing but the kernel.
# It runs from an otherwise empty root (in-empty-root.sh: a chroot with
# proc, sysfs and bpffs mounted, nothing else), loads its programs on this
# kernel and counts real drops exactly. Sourced by run.sh.

UDPDROP_STATIC=${UDPDROP_STATIC:-$ROOT/udpdrop-static}
IN_EMPTY_ROOT=$ROOT/tests/integration/in-empty-root.sh
SHOWIDS=${SHOWIDS:-$ROOT/.output/tests/showids}

static_present() {
	[[ -x $UDPDROP_STATIC ]] && return 0
	fail "no $UDPDROP_STATIC: build it with 'make static'"
	return 1
}

# static_root DIR: DIR holds the static binary and nothing else (0755:
# a command record runs as another user must be able to reach it).
static_root() {
	mkdir -p "$1" && chmod 0755 "$1" && cp "$UDPDROP_STATIC" "$1/" ||
		{ fail "cannot make the root $1"; return 1; }
}

# in_root DIR ARGS...: the static binary in DIR, with ARGS.
in_root() {
	local r=$1
	shift
	"$IN_EMPTY_ROOT" "$r" "$UDPDROP_STATIC" "$@"
}

# What the root holds after a run (the mount points are the wrapper's).
root_left() { (cd "$1" && find . -mindepth 1 | sort | tr '\n' ' '); }

# Linked statically, and the same program as ./udpdrop: same version, same
# commands, same options.
test_static_binary() {
	static_present || return
	local f
	f=$(file -b "$UDPDROP_STATIC")
	[[ $f == *"static-pie linked"* || $f == *"statically linked"* ]] &&
		echo "    ok: file: ${f%%, BuildID*}" || fail "file does not say statically linked: $f"
	ldd "$UDPDROP_STATIC" 2>&1 | grep -qE 'statically linked|not a dynamic executable' &&
		echo "    ok: ldd: $(ldd "$UDPDROP_STATIC" 2>&1 | tr -d '\t')" ||
		fail "ldd lists libraries: $(ldd "$UDPDROP_STATIC" 2>&1 | tr '\n' ' ')"
	expect_eq "program interpreter (PT_INTERP)" \
		"$(readelf -lW "$UDPDROP_STATIC" | grep -c 'INTERP')" 0
	expect_eq "shared libraries needed (DT_NEEDED)" \
		"$(readelf -dW "$UDPDROP_STATIC" | grep -c '(NEEDED)')" 0
	expect_eq "--version" "$("$UDPDROP_STATIC" --version)" "$("$UDPDROP" --version)"
	expect_eq "--help" "$("$UDPDROP_STATIC" --help | md5sum)" "$("$UDPDROP" --help | md5sum)"
	local cmd
	for cmd in top sink gen demo record doctor report; do
		expect_eq "$cmd --help" "$("$UDPDROP_STATIC" "$cmd" --help | md5sum)" \
			"$("$UDPDROP" "$cmd" --help | md5sum)"
	done
}

# From a root that holds the binary alone: --version, one JSON interval,
# and exact counts for a socket that never reads (rcvbuf) and a port
# nobody listens on (no_socket); the socket found by its owner in /proc.
test_static_empty_root() {
	static_present || return
	setup_hosts || return
	local r=$T/root
	static_root "$r" || return
	expect_eq "--version in the empty root" "$(in_root "$r" --version)" "$("$UDPDROP" --version)"
	local one rc
	one=$(in_root "$r" top -b -n 1 -i 0.2 --json 2>"$T/one.err")
	rc=$?
	expect_eq "top -b -n 1 --json: exit code" "$rc" 0
	expect_eq "top -b -n 1 --json: one final object" "$(jq -r .final <<<"$one")" true
	grep -q 'tracing UDP drops via' "$T/one.err" || fail "top -b -n 1: $(cat "$T/one.err")"

	start_recv "$B" "$V4B:5001" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local rcvbuf_before=$(mib "$B" Udp RcvbufErrors) noports_before=$(mib "$B" Udp NoPorts)
	# start_top runs $UDPDROP_WRAP $UDPDROP: the static one, in the root;
	# -N by inode: there is no /run/netns in there
	local UDPDROP=$UDPDROP_STATIC UDPDROP_WRAP="$IN_EMPTY_ROOT $r"
	start_top -N "$(ns_inode "$B")" -v || return
	local ids
	ids=$(sed -n 's/.*program id \([0-9]*\) .*/\1/p' "$TOP_ERR")
	[[ -n $ids ]] || fail "no program ids reported: $(cat "$TOP_ERR")"
	local sent nsent got dropped d
	sent=$(send "$A" "$V4B:5001" -c 300 -s 1000)
	nsent=$(send "$A" "$V4B:5999" -c 10)
	settle
	d=$(ss_drops "$B" 5001)
	stop_top || return
	got=$(stop_recv "$rpid" "$rout")
	dropped=$((sent - got))
	expect_eq sent "$sent" 300
	expect_eq "sent to the closed port" "$nsent" 10
	expect_gt dropped "$dropped" 0
	expect_eq "socket drops" "$(socket_field "$V4B:5001" .drops)" "$dropped"
	expect_eq "socket cause rcvbuf" "$(socket_field "$V4B:5001" .causes.rcvbuf)" "$dropped"
	expect_eq "ss -uam d" "$d" "$dropped"
	expect_eq "UdpRcvbufErrors delta" "$(($(mib "$B" Udp RcvbufErrors) - rcvbuf_before))" "$dropped"
	expect_eq "counters.UdpRcvbufErrors" \
		"$(final ".counters[\"$(ns_inode "$B")\"].UdpRcvbufErrors")" "$dropped"
	expect_eq "owner comm" "$(socket_field "$V4B:5001" .comm)" udptest
	expect_eq "owner pid" "$(socket_field "$V4B:5001" .pid)" "$rpid"
	expect_eq "UdpNoPorts delta" "$(($(mib "$B" Udp NoPorts) - noports_before))" 10
	expect_eq "unattributed no_socket drops" \
		"$(final "[.unattributed[] | select(.cause == \"no_socket\" and .flow == \"$V4A -> $V4B:5999\")][0].drops")" 10
	expect_eq "totals.drops" "$(final .totals.drops)" $((dropped + 10))
	expect_eq "programs left" "$(ids_left $ids)" none
	expect_eq "mounts left under the root" "$(grep -c " $r/" /proc/mounts)" 0
	expect_eq "files left in the root" "$(root_left "$r")" "./proc ./sys ./udpdrop-static "
}

# The full-screen view where the target has a terminfo entry (the one
# copied into the root), and batch output, said, where it has none.
test_static_tui() {
	static_present || return
	setup_hosts || return
	local r=$T/root entry
	static_root "$r" || return
	entry=$(find /etc/terminfo /lib/terminfo /usr/share/terminfo -path '*/t/tmux-256color' \
		2>/dev/null | head -1)
	[[ -n $entry ]] || { fail "no terminfo entry for tmux-256color on this host (ncurses-base)"; return; }
	mkdir -p "$r/usr/share/terminfo/t" && cp "$entry" "$r/usr/share/terminfo/t/" || return
	start_recv "$B" "$V4B:5001" --rcvbuf 4096 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	local UDPDROP="$IN_EMPTY_ROOT $r $UDPDROP_STATIC"
	tui_start 120 30 -N "$(ns_inode "$B")" -i 0.5 || return
	send "$A" "$V4B:5001" -c 300 -s 1000 >/dev/null
	settle 1
	local d
	d=$(ss_drops "$B" 5001)
	expect_gt "ss d 5001" "$d" 0
	tui_wait "$V4B:5001 .* $(commas "$d") rcvbuf" &&
		echo "    ok: full-screen row: $(tui_line "$V4B:5001" | tr -s ' ')" ||
		fail "no row for 5001 with $d drops: $(tui_screen)"
	tui_keys q
	expect_eq "q: exit code" "$(tui_exit)" 0
	tmux -L "$TMUX_SOCK" kill-server

	# no terminfo at all: one line says so, then batch output, exit 0 (the
	# receiver still runs: -N by inode finds the netns through its holder)
	rm -rf "${r:?}/usr"
	local out rc
	out=$(TERM=tmux-256color script -qec "$UDPDROP top -n 1 -i 0.2 -N $(ns_inode "$B")" /dev/null)
	rc=$?
	expect_eq "no terminfo: exit code" "$rc" 0
	grep -q "this terminal (TERM=tmux-256color) cannot show the full-screen view: printing batch output" \
		<<<"$out" && echo "    ok: no terminfo: said, batch output instead" ||
		fail "no terminfo: no fallback line: $out"
	grep -q "=== summary" <<<"$out" || fail "no terminfo: no batch summary: $out"
	stop_recv "$rpid" "$rout" >/dev/null
}

# record as the user behind sudo, with no /etc/passwd: the command runs as
# SUDO_UID with SUDO_GID alone, the trace is theirs, report reads it. Then
# with /etc/passwd and /etc/group but an nsswitch.conf naming a module
# only: the static build never loads NSS modules (they must match the glibc
# it was linked with), it reads the files, so the user's groups and home
# are found. The command (showids, static) prints who it runs as.
test_static_record_sudo_user() {
	static_present || return
	[[ -x $SHOWIDS ]] || { fail "no $SHOWIDS: make $SHOWIDS"; return; }
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	local r=$T/root
	static_root "$r" || return
	cp "$SHOWIDS" "$r/showids" && mkdir "$r/out" && chown 65534:65534 "$r/out" || return
	# (no HOME here: with no entry, record leaves the environment as it is)
	HOME= SUDO_UID=65534 SUDO_GID=65534 in_root "$r" record -o /out/a.trace -- /showids \
		>"$T/ids" 2>"$T/err"
	expect_eq "no /etc/passwd: record exit code" "$?" 0
	expect_eq "no /etc/passwd: the command's ids" "$(cat "$T/ids")" \
		"uid 65534 gid 65534 groups 65534 home -"
	expect_eq "no /etc/passwd: trace owner" "$(stat -c %u:%g "$r/out/a.trace")" 65534:65534
	in_root "$r" report /out/a.trace >"$T/report" 2>&1
	expect_eq "report of it: exit code" "$?" 0
	grep -q 'complete' "$T/report" || fail "report: $(head -5 "$T/report")"

	mkdir "$r/etc"
	echo 'udtuser:x:65534:65534:udt:/udt-home:/showids' >"$r/etc/passwd"
	printf 'udtgroup:x:65534:\nudtextra:x:4242:udtuser\n' >"$r/etc/group"
	printf 'passwd: udtmissing\ngroup: udtmissing\n' >"$r/etc/nsswitch.conf"
	SUDO_UID=65534 SUDO_GID=65534 in_root "$r" record -o /out/b.trace -- /showids \
		>"$T/ids" 2>"$T/err"
	expect_eq "/etc/passwd, a module in nsswitch.conf: record exit code" "$?" 0
	expect_eq "the command's ids, from /etc/passwd and /etc/group" "$(cat "$T/ids")" \
		"uid 65534 gid 65534 groups 4242 65534 home /udt-home"
}
