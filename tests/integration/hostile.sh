# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Hostile input: every subcommand fed what a careless or hostile caller
# gives it. The matrix comes from `udpdrop --help` and each `udpdrop CMD
# --help`: every option that takes a value gets every bad value, every
# option or argument that names a file gets every kind of file, every
# subcommand gets a full and a closed stdout. A new option or subcommand is
# covered the day it shows in --help (a new subcommand also needs a short
# valid run in HS_RUN below: the tests say so until it has one).
#
# Every case runs under `timeout` (a hang is a failure) in a session of its
# own, and must:
#   - exit with the code documented for its class (README "Exit codes");
#   - say why in one printable line on stderr (a bad option's line may be
#     followed by "Try 'udpdrop CMD --help'."; a runtime failure may follow
#     the command's usual progress lines), naming the option at fault;
#   - leave the stand-ins beside it (mknod devices, FIFOs, symlinks, a
#     read-only file, a socket; never the real /dev) with the same type,
#     mode, owner, size, mtime and inode; create no file it was not told
#     to write, and after a failure, not even that one;
#   - leave no udpdrop BPF program loaded, no process of its session
#     running and no netns of its own behind.
# Sourced by run.sh (needs root).

HS_TIMEOUT=${HS_TIMEOUT:-10}

# A short, valid run of each subcommand (a few tenths of a second):
# @OUT is an output file the case names, @TRACE a recorded trace with packet
# headers, @PORT a free local port.
declare -A HS_RUN=(
	[top]="-b -n 1 -i 0.2"
	[record]="-d 0.3 -o @OUT"
	[report]="@TRACE"
	[doctor]="-d 0.5"
	[sink]="127.0.0.1:@PORT -d 0.3"
	[gen]="127.0.0.1:@PORT -n 10 --no-control"
	[demo]="noport -d 0.5 -b"
	[serve]="--listen 127.0.0.1:0 -n 1 -i 0.2"
)

# Bad values for any option that takes one (never a valid value of any).
HS_VALUE_NAMES=(empty negative non-numeric huge nan inf trailing-garbage control-chars)
HS_VALUES=("" "-1" "abc" "99999999999999999999999" "nan" "1e999" "1x" $'1\n\e[31mX')

# ---- the matrix, from --help -------------------------------------------

hs_commands() {
	"$UDPDROP" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'
}

# hs_options CMD: "NAME METAVAR" for each option that takes a value (the
# long name where there is one), from the option column of CMD --help.
hs_options() {
	"$UDPDROP" "$1" --help | awk '
		# option lines start within 8 columns; their wrapped help further in
		match($0, /^ +-/) && RLENGTH <= 9 {
			col = $0
			sub(/^ +/, "", col)
			i = index(col, "  ")   # the column ends at a run of spaces
			if (i) col = substr(col, 1, i - 1)
			n = split(col, w, /[ ,]+/)
			short = ""; long = 0
			for (j = 1; j <= n; j++) {
				if (w[j] ~ /^--[a-z]/) {
					long = 1
					if (j < n && w[j + 1] ~ /^[A-Z][A-Z_:]*$/)
						print w[j], w[++j]
				} else if (w[j] ~ /^-[A-Za-z0-9]$/) {
					short = w[j]
					if (j < n && w[j + 1] ~ /^[A-Z][A-Z_:]*$/ && !(j + 2 <= n && w[j + 2] ~ /^--/))
						print w[j], w[++j]
				}
			}
		}'
}

# hs_has_option CMD OPT: does CMD --help list OPT?
hs_has_option() { "$UDPDROP" "$1" --help | grep -qE -- "(^|[ ,])$2([ ,=]|$)"; }

# hs_positionals CMD: the Usage line's arguments, "NAME" or "[NAME]"
# (optional), options and a "-- COMMAND" tail left out.
hs_positionals() {
	"$UDPDROP" "$1" --help | awk -v cmd="$1" '
		/^Usage:/ {
			sub(/^Usage: udpdrop [a-z]+/, "")
			sub(/ \[?--( .*|$)/, "")        # -- COMMAND [ARGS...]
			gsub(/\[-[^]]*\]/, "")           # [-d SECS], [--json]
			n = split($0, w, / +/)
			for (j = 1; j <= n; j++)
				if (w[j] != "" && w[j] != "[OPTIONS]" && w[j] != "OPTIONS")
					print w[j]
			exit
		}'
}

# The class of what an option or argument names, by its metavar and name:
# out (a file written), in (a file read), netns, or value.
hs_class() { # NAME METAVAR
	case "$2" in
	OUT) echo out; return ;;
	NS | NETNS) echo netns; return ;;
	FILE | PATH)
		[[ $1 == *output* ]] && echo out || echo in
		return ;;
	esac
	echo value
}

# ---- per-test setup --------------------------------------------------------

# hs_setup: $T, the scratch directory the cases run in ($HS_CWD), a free
# port, and the names of udpdrop's BPF programs (from bpf/*.bpf.c).
hs_setup() {
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	HS_CWD=$T/cwd HS_D=$T/d
	mkdir -p "$HS_CWD"
	HS_PORT=$((RANDOM % 20000 + 30000))
	HS_PROGS=$(awk '/^SEC\("[a-z]/ { getline; if (match($0, /BPF_PROG\([a-z_0-9]+/)) print substr($0, RSTART + 9, RLENGTH - 9);
		else if (match($0, /int [a-z_0-9]+\(/)) print substr($0, RSTART + 4, RLENGTH - 5) }' "$ROOT"/bpf/*.bpf.c | paste -sd'|')
	[[ -n $HS_PROGS ]] || { fail "no BPF program names found in bpf/*.bpf.c"; return 1; }
	HS_FAILS=0 HS_CASES=0 HS_START=$SECONDS
	hs_make_standins "$T/standins"
}

# hs_standins: a fresh directory of stand-in files, $HS_D (a copy of the
# set hs_setup made: cp -a keeps types, modes, owners, times and holes).
hs_standins() {
	rm -rf "$HS_D"
	cp -a "$T/standins" "$HS_D"
}

hs_make_standins() {
	local d=$1
	mkdir -p "$d/dir"
	: >"$d/empty"
	echo precious >"$d/regular"
	chmod 0644 "$d/regular"
	chown 65534:65534 "$d/regular"
	echo read-only >"$d/readonly"
	chmod 0444 "$d/readonly"
	mkfifo -m 0640 "$d/fifo"
	mknod -m 0666 "$d/null" c 1 3
	mknod -m 0666 "$d/zero" c 1 5
	mknod -m 0666 "$d/full" c 1 7
	mknod -m 0660 "$d/blk" b 240 0 # a block major no driver has: no disk behind it
	ln -s regular "$d/link-regular"
	ln -s fifo "$d/link-fifo"
	ln -s does-not-exist "$d/link-dangling"
	ln -s link-loop "$d/link-loop"
	truncate -s 1G "$d/huge"
	printf 'not a trace\n%.0s' {1..300} >"$d/garbage"
	echo secret >"$d/unreadable"
	chmod 0000 "$d/unreadable"
	command -v python3 >/dev/null &&
		python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
	# as they are now, to the nanosecond
	touch -d '2001-02-03 04:05:06.123456789' -h "$d"/* 2>/dev/null
	touch -d '2001-02-03 04:05:06.123456789' "$d"
}

# The trace the report cases read: drops with headers, in a netns of ours.
hs_trace() {
	local ns=udt-$$-h i
	HS_TRACE=$T/fixture.data
	ip netns add "$ns" && EXTRA_NETNS+=("$ns") && ip -n "$ns" link set lo up ||
		{ fail "cannot make netns $ns"; return 1; }
	HS_NETNS=$ns
	"$UDPDROP" record -N "$ns" --headers 64 -d 1.5 -i 0.5 -o "$HS_TRACE" 2>"$T/fixture.err" &
	local pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q 'recording UDP drops' "$T/fixture.err" && break
		sleep 0.1
	done
	ip netns exec "$ns" "$UDPTEST" send 127.0.0.1:9 -c 20 >/dev/null
	wait "$pid" || { fail "the fixture trace: $(cat "$T/fixture.err")"; return 1; }
	chmod 0644 "$HS_TRACE"
}

# hs_args CMD: HS_RUN's short run of CMD, placeholders filled in (array HS_ARGS).
hs_args() {
	local w
	HS_ARGS=()
	[[ -v HS_RUN[$1] ]] || { fail "no short valid run of '$1': add one to HS_RUN in tests/integration/hostile.sh"; return 1; }
	for w in ${HS_RUN[$1]}; do
		w=${w//@OUT/$HS_CWD/run.out}
		w=${w//@TRACE/$HS_TRACE}
		w=${w//@PORT/$HS_PORT}
		HS_ARGS+=("$w")
	done
}

# ---- one case --------------------------------------------------------------

# The state a case must not change: every file under $HS_CWD and $HS_D
# (type, mode, owner, size, mtime, inode, device numbers, link target).
hs_snap() {
	find "$HS_CWD" "$HS_D" -mindepth 1 2>/dev/null | sort |
		xargs -r -d '\n' stat -c '%n|%F|%a|%u|%g|%s|%y|%i|%t:%T|%N' 2>/dev/null
}

# The ids of loaded programs with udpdrop's names.
hs_prog_ids() {
	bpftool prog show -j 2>/dev/null |
		jq -r --arg re "^($HS_PROGS)\$" '.[] | select((.name // "") | test($re)) | .id' | sort
}

# hs_holders ID: the pids whose fds hold program ID (a prog or link fd).
hs_holders() {
	grep -lsE "^prog_id:[[:space:]]+$1\$" /proc/[0-9]*/fdinfo/* 2>/dev/null | cut -d/ -f3 | sort -u
}

# hs_left_progs BEFORE SIDS: programs loaded since BEFORE that no process of
# another session holds (other runs on this machine load their own), and
# still loaded after the kernel had time to free them: "ID(held by PIDs)".
# SIDS: the sessions of the cases (space-separated).
hs_left_progs() {
	local before=$1 sids=" $2 " i id p mine left
	for ((i = 0; i < 30; i++)); do
		left=
		for id in $(comm -13 <(echo "$before") <(hs_prog_ids)); do
			mine=unheld
			for p in $(hs_holders "$id"); do
				if [[ $sids == *" $(awk '{ print $6 }' "/proc/$p/stat" 2>/dev/null) "* ]]; then
					mine="held by $p ($(cat "/proc/$p/comm" 2>/dev/null))"
				elif [[ $mine == unheld ]]; then
					mine=
				fi
			done
			[[ -n $mine ]] && left+="$id ($mine) "
		done
		[[ -z $left ]] && return
		sleep 0.2
	done
	echo "$left"
}

# hs_case LABEL ARGS...: udpdrop ARGS, checked. What is expected comes in
# variables set for the call:
#   HS_RC     the exit codes allowed (a regex: 2, 0|1); required
#   HS_LINES  usage: one line (+ the Try hint); runtime: one line beyond the
#             command's usual ones (HS_USUAL); any: not counted
#   HS_NAME   a string the first stderr line must hold (the option)
#   HS_MATCH  a regex one stderr line must match
#   HS_OUT    paths the case writes (their content may change; type, mode,
#             owner and inode may not; created ones are gone after a failure)
#   HS_STDOUT file (default), full (the stand-in /dev/full) or closed
#   HS_WRAP   a command to run the case under (e.g. a private mount ns)
#   HS_AS     run as this uid (setpriv, no capabilities)
#   HS_BATCH  set: the BPF check is left to hs_batch_end (cheaper for many
#             cases that should not even load BPF)
# Failures are reported with the label and the command line; the return
# code is 1 if any check failed.
hs_case() {
	local label=$1 rc err=$T/case.err out=$T/case.out sidf=$T/case.sid
	shift
	local before after ids sid p problems=() line n
	local -a run=(setsid sh -c 'echo $$ >"$0"; exec "$@"' "$sidf")
	[[ -n ${HS_AS:-} ]] && run+=(setpriv --reuid="$HS_AS" --regid="$HS_AS" --clear-groups --inh-caps=-all)
	HS_CASES=$((HS_CASES + 1))
	# HS_RUN's @OUT: a case may write it; none finds it there before
	rm -f "$HS_CWD/run.out"
	local HS_OUT="${HS_OUT:-} $HS_CWD/run.out"
	before=$(hs_snap)
	[[ -z ${HS_BATCH:-} ]] && ids=$(hs_prog_ids)
	: >"$err"
	rm -f "$sidf" "$out"
	case ${HS_STDOUT:-file} in
	full) (cd "$HS_CWD" && exec timeout -k 2 "$HS_TIMEOUT" "${run[@]}" ${HS_WRAP:-} "$UDPDROP" "$@" </dev/null >"$HS_D/full" 2>"$err") ;;
	closed) (cd "$HS_CWD" && exec timeout -k 2 "$HS_TIMEOUT" "${run[@]}" ${HS_WRAP:-} "$UDPDROP" "$@" </dev/null >&- 2>"$err") ;;
	*) (cd "$HS_CWD" && exec timeout -k 2 "$HS_TIMEOUT" "${run[@]}" ${HS_WRAP:-} "$UDPDROP" "$@" </dev/null >"$out" 2>"$err") ;;
	esac
	rc=$?
	HS_LAST_RC=$rc
	sid=$(cat "$sidf" 2>/dev/null)

	# the exit code
	if ((rc == 124 || rc == 137)); then
		problems+=("hung: killed after ${HS_TIMEOUT} s")
	elif [[ ! $rc =~ ^(${HS_RC})$ ]]; then
		problems+=("exit $rc, want ${HS_RC}")
	fi
	# stderr: printable, one line saying why, naming the option
	if LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$err"; then
		problems+=("stderr has control characters: $(head -c 300 "$err" | cat -v | tr '\n' '|')")
	fi
	case ${HS_LINES:-any} in
	usage)
		n=$(grep -cv "^Try 'udpdrop\( [a-z]*\)\? --help'\.\$" "$err")
		((n == 1)) || problems+=("stderr: $n lines besides the Try hint, want 1")
		;;
	runtime)
		n=$(hs_unusual <"$err" | wc -l)
		((n == 1)) || problems+=("stderr: $n unusual lines, want 1")
		;;
	esac
	# an option is named by its long name, dashes or not ("unknown
	# netns"), or by the value given, quoted ("no interface 'x'")
	local needle=${HS_NAME:-}
	[[ $needle == --* ]] && needle=${needle#--}
	if [[ -n $needle ]] && ! head -n 1 "$err" | grep -qF -e "$needle" -e "'${HS_VALUE:-$needle}'"; then
		problems+=("the first stderr line names neither $HS_NAME nor its value")
	fi
	if [[ -n ${HS_MATCH:-} ]] && ! grep -qE -- "$HS_MATCH" "$err"; then
		problems+=("no stderr line matches /$HS_MATCH/")
	fi
	# the files: nothing changed but what the case writes
	after=$(hs_snap)
	local diffs
	diffs=$(hs_snap_diff "$before" "$after" "$rc")
	[[ -n $diffs ]] && problems+=("$diffs")
	# nothing left behind
	if [[ -n $sid ]]; then
		local leftp
		if [[ -n ${HS_BATCH:-} ]]; then
			HS_BATCH_SIDS+=" $sid"
		else
			leftp=$(hs_left_progs "$ids" "$sid")
			[[ -n $leftp ]] && problems+=("BPF programs left loaded: $leftp")
		fi
		local procs
		procs=$(ps -e -o pid=,sid=,comm= | awk -v s="$sid" '$2 == s { print $1 "(" $3 ")" }' | tr '\n' ' ')
		if [[ -n $procs ]]; then
			problems+=("processes of the case left running: $procs")
			kill -KILL $(ps -e -o pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }') 2>/dev/null
		fi
		local ns
		ns=$(ls /run/netns 2>/dev/null | grep -E -- "-$sid\$" | tr '\n' ' ')
		[[ -n $ns ]] && problems+=("netns left: $ns")
	else
		problems+=("the case did not start (no session id)")
	fi
	if ((${#problems[@]})); then
		HS_FAILS=$((HS_FAILS + 1))
		fail "[$label] udpdrop $(hs_quote "$@")"
		for line in "${problems[@]}"; do
			echo "        - $line" >&2
		done
		echo "        stderr: $(head -c 400 "$err" | cat -v | sed 's/$/|/' | tr -d '\n')" >&2
		return 1
	fi
	return 0
}

# The command line as it could be typed again (values quoted, controls shown).
hs_quote() {
	local a s=
	for a in "$@"; do
		[[ $a =~ ^[A-Za-z0-9_./:@=+-]+$ ]] && s+="$a " || s+="$(printf '%q' "$a") "
	done
	echo "${s% }"
}

# Lines of stderr (stdin) that a good run of the command does not print:
# compared by their first three words, digits ignored (HS_USUAL: a good
# run's stderr).
hs_unusual() {
	{
		echo "#sentinel#" # never empty: awk tells the files apart by it
		printf '%s\n' "${HS_USUAL:-}" | awk 'NF { print $1 " " $2 " " $3 }' | tr '0-9' '#'
	} >"$T/usual.keys"
	awk 'NR == FNR { seen[$0] = 1; next }
		{ k = $1 " " $2 " " $3; gsub(/[0-9]/, "#", k); if (!(k in seen)) print }' "$T/usual.keys" -
}

# hs_snap_diff BEFORE AFTER RC: what changed that may not have.
hs_snap_diff() {
	local rc=$3
	awk -F'|' -v outs="${HS_OUT:-}" -v rc="$rc" '
		BEGIN { n = split(outs, o, " "); for (i = 1; i <= n; i++) out[o[i]] = 1 }
		NR == FNR { before[$1] = $0; next }
		{ after[$1] = $0 }
		END {
			for (p in before) {
				if (!(p in after)) { print "removed: " p; continue }
				if (before[p] == after[p]) continue
				split(before[p], b, "|"); split(after[p], a, "|")
				if (p in out) {
					# content may change; what it is may not
					if (b[2] != a[2] || b[3] != a[3] || b[4] != a[4] || b[5] != a[5] || b[8] != a[8] || b[9] != a[9] || b[10] != a[10])
						print "changed (type/mode/owner/inode): " before[p] " -> " after[p]
				} else
					print "changed: " before[p] " -> " after[p]
			}
			for (p in after) {
				if (p in before) continue
				if (!(p in out)) print "created: " after[p]
				else if (rc != 0) print "left after a failure: " after[p]
			}
		}' <(echo "$1") <(echo "$2") | sed "s|$T/||g" | tr '\n' ';'
}

# The stderr of a good short run of CMD (the usual lines), and whether it
# writes to stdout: HS_USUAL, HS_PRINTS (yes/no).
hs_usual() {
	local cmd=$1
	hs_args "$cmd" || return 1
	rm -f "$HS_CWD/run.out"
	(cd "$HS_CWD" && timeout -k 2 "$HS_TIMEOUT" "$UDPDROP" "$cmd" "${HS_ARGS[@]}" </dev/null >"$T/usual.out" 2>"$T/usual.err")
	local rc=$?
	rm -f "$HS_CWD/run.out"
	((rc == 0)) || { fail "the short run 'udpdrop $cmd ${HS_ARGS[*]}' exits $rc: $(head -c 300 "$T/usual.err")"; return 1; }
	HS_USUAL=$(cat "$T/usual.err")
	[[ -s $T/usual.out ]] && HS_PRINTS=yes || HS_PRINTS=no
}

# A batch of cases whose BPF check is done once, at the end.
hs_batch_begin() {
	HS_BATCH_IDS=$(hs_prog_ids) HS_BATCH_SIDS=
}
hs_batch_end() { # LABEL
	local left
	left=$(hs_left_progs "$HS_BATCH_IDS" "$HS_BATCH_SIDS")
	[[ -z $left ]] || fail "[$1] BPF programs left loaded: $left"
}

hs_summary() {
	echo "    $HS_CASES cases, $HS_FAILS failed ($((SECONDS - HS_START)) s)"
}

# ---- the tests ---------------------------------------------------------------

# Every option that takes a value, every bad value, and the value missing;
# every argument that is not a file, every bad value; an unknown option.
test_hostile_values() {
	hs_setup || return
	hs_standins
	hs_trace || return
	local cmd name meta class i pos
	for cmd in $(hs_commands); do
		hs_args "$cmd" || continue
		while read -r name meta; do
			class=$(hs_class "$name" "$meta")
			hs_batch_begin
			for i in "${!HS_VALUES[@]}"; do
				# a file's name may be anything but empty
				[[ $class == out || $class == in ]] && [[ -n ${HS_VALUES[$i]} ]] && continue
				HS_BATCH=1 HS_RC=2 HS_LINES=usage HS_NAME=$name HS_VALUE=${HS_VALUES[$i]} \
					hs_case "$cmd $name ${HS_VALUE_NAMES[$i]}" "$cmd" "${HS_ARGS[@]}" "$name" "${HS_VALUES[$i]}"
			done
			HS_BATCH=1 HS_RC=2 HS_LINES=usage HS_NAME=$name hs_case "$cmd $name missing" \
				"$cmd" "${HS_ARGS[@]}" "$name"
			hs_batch_end "$cmd $name: bad values"
		done < <(hs_options "$cmd")
		HS_RC=2 HS_LINES=usage HS_NAME=--no-such-option hs_case "$cmd unknown option" \
			"$cmd" "${HS_ARGS[@]}" --no-such-option
		# arguments: each bad value in place of the first one that is not a file
		for pos in $(hs_positionals "$cmd"); do
			[[ $(hs_class x "${pos//[][]/}") == value ]] || continue
			for i in "${!HS_VALUES[@]}"; do
				HS_RC=2 HS_LINES=usage hs_case "$cmd $pos ${HS_VALUE_NAMES[$i]}" \
					"$cmd" "${HS_VALUES[$i]}" "${HS_ARGS[@]:1}"
			done
			break
		done
	done
	HS_RC=2 HS_LINES=usage hs_case "empty command" ""
	hs_summary
}

# Files to read: the trace argument, and -N's nsfs path. Never a hang; a
# trace that is not one: exit 1; a netns that is not one: exit 2.
test_hostile_inputs() {
	hs_setup || return
	hs_standins
	hs_trace || return
	local cmd name meta pos kind want
	local kinds=(missing empty dir fifo link-fifo null zero full blk sock link-dangling link-loop huge garbage regular)
	for cmd in $(hs_commands); do
		hs_args "$cmd" || continue
		# a FILE argument (report's trace)
		for pos in $(hs_positionals "$cmd"); do
			[[ $(hs_class x "${pos//[][]/}") == in ]] || continue
			hs_usual "$cmd" || continue
			HS_RC=0 hs_case "$cmd $pos valid trace" "$cmd" "$HS_TRACE"
			ln -s "$HS_TRACE" "$HS_D/link-trace"
			HS_RC=0 hs_case "$cmd $pos symlink to a trace" "$cmd" "$HS_D/link-trace"
			rm "$HS_D/link-trace"
			for kind in "${kinds[@]}" ; do
				[[ -e $HS_D/$kind || -L $HS_D/$kind || $kind == missing ]] || continue
				HS_RC=1 HS_LINES=runtime hs_case "$cmd $pos $kind" "$cmd" "$HS_D/$kind"
			done
			HS_RC=1 HS_LINES=runtime hs_case "$cmd $pos nsfs file" "$cmd" /proc/self/ns/net
			# unreadable: as a user root's bypass does not apply to
			chmod 0755 "$T" "$HS_D"
			HS_AS=65534 HS_RC=1 HS_LINES=runtime hs_case "$cmd $pos unreadable" "$cmd" "$HS_D/unreadable"
			chmod 0700 "$T"
		done
		# -N and its kin: a netns named by a path
		while read -r name meta; do
			[[ $(hs_class "$name" "$meta") == netns ]] || continue
			HS_RC=0 hs_case "$cmd $name valid netns path" "$cmd" "${HS_ARGS[@]}" "$name" "/run/netns/$HS_NETNS"
			ln -s "/run/netns/$HS_NETNS" "$HS_D/link-netns"
			HS_RC=0 hs_case "$cmd $name symlink to a netns" "$cmd" "${HS_ARGS[@]}" "$name" "$HS_D/link-netns"
			rm "$HS_D/link-netns"
			for kind in "${kinds[@]}"; do
				[[ -e $HS_D/$kind || -L $HS_D/$kind || $kind == missing ]] || continue
				HS_RC=2 HS_LINES=usage HS_NAME=$HS_D/$kind hs_case "$cmd $name $kind" \
					"$cmd" "${HS_ARGS[@]}" "$name" "$HS_D/$kind"
			done
			HS_RC=2 HS_LINES=usage hs_case "$cmd $name nsfs of another type (mnt)" \
				"$cmd" "${HS_ARGS[@]}" "$name" /proc/self/ns/mnt
		done < <(hs_options "$cmd")
		rm -f "$HS_CWD/run.out"
	done
	hs_summary
}

# Files to write (record -o, report --pcap): symlinks followed, never
# replaced; an existing file refused without -f, truncated in place with
# it (mode and owner kept); devices and FIFOs written through, never
# chmod'ed; a FIFO nobody reads: exit 1, no hang; a block device, a
# directory, a socket: exit 2; the input itself: exit 2.
test_hostile_outputs() {
	hs_setup || return
	hs_standins
	hs_trace || return
	local cmd name meta force f kind label
	for cmd in $(hs_commands); do
		hs_args "$cmd" || continue
		while read -r name meta; do
			[[ $(hs_class "$name" "$meta") == out ]] || continue
			hs_usual "$cmd" || continue
			local forces=("")
			hs_has_option "$cmd" --force && forces+=(--force)
			for force in "${forces[@]}"; do
				label="$cmd $name${force:+ $force}"
				f=()
				[[ -n $force ]] && f=("$force")
				hs_standins
				HS_RC=0 HS_OUT="$HS_D/new" hs_case "$label new file" "$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/new" &&
					hs_valid_output "$name" "$HS_D/new" "$label new file"
				# where the help promises a mode
				if [[ -e $HS_D/new ]] && "$UDPDROP" "$cmd" --help | grep -- "$name" | grep -q 'mode 0600'; then
					expect_eq "$label new file: mode" "$(stat -c %a "$HS_D/new")" 600
				fi
				hs_standins
				# as root, creating a file through a symlink that points
				# nowhere is how another user's link redirects a write:
				# refused (exit 2), nothing created
				HS_RC=2 hs_case "$label dangling symlink (refused)" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/link-dangling"
				for kind in regular readonly link-regular; do
					hs_standins
					local target=$HS_D/$kind
					[[ $kind == link-regular ]] && target=$HS_D/regular
					if [[ -n $force ]]; then
						HS_RC=0 HS_OUT=$target hs_case "$label existing $kind (truncated in place)" \
							"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/$kind" &&
							hs_valid_output "$name" "$target" "$label existing $kind"
					else
						HS_RC=2 HS_LINES=usage hs_case "$label existing $kind (refused)" \
							"$cmd" "${HS_ARGS[@]}" "$name" "$HS_D/$kind"
					fi
				done
				hs_standins
				HS_RC=0 HS_OUT=$HS_D/null hs_case "$label char device (written through)" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/null"
				hs_standins
				cat "$HS_D/fifo" >"$T/fifo.got" &
				local reader=$!
				BG_PIDS+=("$reader")
				if HS_RC=0 HS_OUT=$HS_D/fifo hs_case "$label FIFO with a reader (written through)" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/fifo"; then
					timeout 5 tail --pid="$reader" -f /dev/null 2>/dev/null
					if kill -0 "$reader" 2>/dev/null; then
						fail "[$label FIFO with a reader] the reader never saw the writer close"
					else
						hs_valid_output "$name" "$T/fifo.got" "$label FIFO with a reader"
					fi
				fi
				kill "$reader" 2>/dev/null # blocked in open() when nothing was written
				wait "$reader" 2>/dev/null
				hs_standins
				HS_RC=1 HS_LINES=runtime HS_OUT=$HS_D/fifo hs_case "$label FIFO without a reader" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/fifo"
				hs_standins
				HS_RC=1 HS_LINES=runtime HS_OUT=$HS_D/full hs_case "$label /dev/full stand-in" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/full"
				for kind in blk dir sock; do
					[[ -e $HS_D/$kind ]] || continue
					hs_standins
					HS_RC=2 HS_LINES=usage hs_case "$label $kind" \
						"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/$kind"
				done
				hs_standins
				HS_RC=1 HS_LINES=runtime hs_case "$label in a missing directory" \
					"$cmd" "${HS_ARGS[@]}" "${f[@]}" "$name" "$HS_D/no/such/dir/out"
				# the file it reads, named as the output
				if [[ " ${HS_ARGS[*]} " == *" $HS_TRACE "* ]]; then
					hs_standins
					cp -p "$HS_TRACE" "$HS_D/trace"
					touch -d '2001-02-03 04:05:06.123456789' "$HS_D/trace" "$HS_D"
					HS_RC=2 HS_LINES=usage hs_case "$label the input itself" \
						"$cmd" "${HS_ARGS[@]/$HS_TRACE/$HS_D/trace}" "${f[@]}" "$name" "$HS_D/trace"
				fi
			done
		done < <(hs_options "$cmd")
	done
	hs_summary
}

# hs_valid_output OPTION FILE LABEL: what was written is whole: a pcapng
# file for --pcap, else a trace `udpdrop report` reads.
hs_valid_output() {
	if [[ $1 == --pcap ]]; then
		[[ $(head -c 4 "$2" | od -An -tx1 | tr -d ' \n') == 0a0d0d0a ]] ||
			fail "[$3] $2 is not pcapng ($(stat -c %s "$2" 2>/dev/null) bytes)"
	else
		"$UDPDROP" report "$2" >/dev/null 2>"$T/valid.err" ||
			fail "[$3] what was written is not a trace: $(head -n 1 "$T/valid.err")"
	fi
}

# A full disk: a small tmpfs in a private mount namespace, full (4 KiB,
# all taken: the first write fails) or nearly full (4 KiB left: a write
# fails part way, or the output fits). Exit 1 with one line and no file
# left behind, or (nearly full) exit 0 with the whole output, or exit 1
# with what a recording had written kept, cut short, and said so.
test_hostile_full_disk() {
	hs_setup || return
	hs_standins
	hs_trace || return
	local cmd name meta f how label
	# the mount's contents after the run go to $T/tmpfs.ls, its output to $T/tmpfs.out
	cat >"$T/full-disk.sh" <<-'EOF'
	mnt=$1 size=$2 fill=$3 out=$4
	shift 4
	mount -t tmpfs -o size=$size,mode=0755 udt-full "$mnt" || exit 99
	yes filler | head -c "$fill" >"$mnt/filler" 2>/dev/null
	"$@"
	rc=$?
	ls -A "$mnt" >"$out.ls"
	[ -e "$mnt/out" ] && cp "$mnt/out" "$out"
	exit $rc
	EOF
	for cmd in $(hs_commands); do
		hs_args "$cmd" || continue
		while read -r name meta; do
			[[ $(hs_class "$name" "$meta") == out ]] || continue
			hs_usual "$cmd" || continue
			mkdir -p "$HS_D/tmpfs"
			touch -d '2001-02-03 04:05:06.123456789' "$HS_D/tmpfs" "$HS_D"
			for f in "" --force; do
				[[ -n $f ]] && ! hs_has_option "$cmd" --force && continue
				for how in full nearly-full; do
					label="$cmd $name${f:+ $f} on a $how disk"
					rm -f "$T/tmpfs.out" "$T/tmpfs.out.ls"
					# full: 4 KiB, all taken; nearly full: 8 KiB, 4 KiB taken
					local size=4k fill=65536 want=1
					[[ $how == nearly-full ]] && size=8k fill=4096 want='0|1'
					HS_WRAP="unshare -m --propagation private bash $T/full-disk.sh $HS_D/tmpfs $size $fill $T/tmpfs.out" \
						HS_RC=$want HS_LINES=any hs_case "$label" \
						"$cmd" "${HS_ARGS[@]}" ${f:+"$f"} "$name" "$HS_D/tmpfs/out"
					if ((HS_LAST_RC == 0)); then
						hs_valid_output "$name" "$T/tmpfs.out" "$label (exit 0)"
					elif [[ $(tr '\n' ' ' <"$T/tmpfs.out.ls" 2>/dev/null) == "filler out " ]] &&
						grep -q "keeps what was written before the failure" "$T/case.err"; then
						# the disk filled once it recorded (a snapshot
						# written: on a busy machine the short run gets
						# there): what was written stays, cut short, and
						# says so (record.c); report reads it
						hs_valid_output "$name" "$T/tmpfs.out" "$label (kept, cut short)"
						expect_eq "$label: exit 1, kept: lines on stderr beyond the usual" \
							"$(hs_unusual <"$T/case.err" | wc -l)" 2
					else
						expect_eq "$label: files left on it" "$(tr '\n' ' ' <"$T/tmpfs.out.ls" 2>/dev/null)" "filler "
						expect_eq "$label: exit 1: lines on stderr beyond the usual" \
							"$(hs_unusual <"$T/case.err" | wc -l)" 1
					fi
				done
			done
		done < <(hs_options "$cmd")
	done
	hs_summary
}

# stdout full (the stand-in /dev/full) or closed, for --help, -V and each
# short run: what prints nothing may succeed; what prints and cannot:
# exit 1 and a "write error" line, never a silent exit 0.
test_hostile_stdout() {
	hs_setup || return
	hs_standins
	hs_trace || return
	local cmd how
	for how in full closed; do
		HS_STDOUT=$how HS_RC=1 HS_LINES=runtime HS_MATCH='write error' HS_OUT=$HS_D/full \
			hs_case "udpdrop --help, stdout $how" --help
		HS_STDOUT=$how HS_RC=1 HS_LINES=runtime HS_MATCH='write error' HS_OUT=$HS_D/full \
			hs_case "udpdrop -V, stdout $how" -V
	done
	for cmd in $(hs_commands); do
		hs_usual "$cmd" || continue
		for how in full closed; do
			HS_STDOUT=$how HS_RC=1 HS_LINES=runtime HS_MATCH='write error' HS_OUT=$HS_D/full \
				hs_case "$cmd --help, stdout $how" "$cmd" --help
			hs_has_option "$cmd" --version &&
				HS_STDOUT=$how HS_RC=1 HS_LINES=runtime HS_MATCH='write error' HS_OUT=$HS_D/full \
					hs_case "$cmd --version, stdout $how" "$cmd" --version
			if [[ $HS_PRINTS == yes ]]; then
				HS_STDOUT=$how HS_RC=1 HS_LINES=runtime HS_MATCH='write error' HS_OUT="$HS_D/full $HS_CWD/run.out" \
					hs_case "$cmd short run, stdout $how" "$cmd" "${HS_ARGS[@]}"
			else
				HS_STDOUT=$how HS_RC=0 HS_OUT="$HS_D/full $HS_CWD/run.out" \
					hs_case "$cmd short run (prints nothing), stdout $how" "$cmd" "${HS_ARGS[@]}"
				# a file opened while fd 1 was closed gets fd 1: nothing
				# meant for stdout may land in it
				[[ -e $HS_CWD/run.out ]] && hs_valid_output "" "$HS_CWD/run.out" "$cmd short run, stdout $how"
			fi
			rm -f "$HS_CWD/run.out"
		done
	done
	hs_summary
}
