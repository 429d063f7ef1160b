#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The benchmark (tools/bench.sh) as one folder, for a machine that has a
# kernel and a shell's usual tools (bash, perl, awk, grep, sed, sysctl;
# ss and unshare optional) but no build tools, no bpftool, no jq and no
# Debian libraries (a lent many-CPU machine).
#
#   tools/bench-bundle.sh                     (make bench-bundle)
#   BASELINE_REV=2cdf936 tools/bench-bundle.sh  (adds top@base, record@base)
#
# It writes .devbench/ in the repository root (git-ignored; made anew each
# time):
#   bin/   udpdrop (make static), bench-storm (static), and the dynamic
#          programs the benchmark calls: bench-floor, tracecat, bpftool, jq;
#          udpdrop-base (static, of BASELINE_REV) when asked for
#   lib/   every shared library those need, the dynamic loader and glibc
#          included, copied from this machine (ldd), so that nothing
#          depends on the other machine's libraries
#   wrap/  a script per dynamic program: this loader, these libraries
#   run.sh tools/bench.sh with the bundle's programs, in the repository
#          root the bundle sits in (on the other machine, a copy of this
#          working tree with .devbench carried along); it leaves the tree's
#          .output/ alone:
#            .devbench/run.sh
#            SENDERS="1 2 4 8 16" ROUNDS=2 SECS=2 .devbench/run.sh
#          Any of bench.sh's variables pass through.
set -euo pipefail
cd "$(dirname "$0")/.."

D=.devbench
BASELINE_REV=${BASELINE_REV:-}

die() {
	echo "bench-bundle: $*" >&2
	exit 1
}

(($# == 0)) || die "no arguments: the bundle is always .devbench/ in the repository root"
for t in bpftool jq ldd cc git; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
# emptied below: only a bundle this script made, or nothing
if [[ -L $D || (-e $D && ! -d $D) ]]; then
	die "$D exists and is not a folder: move it away"
fi
if [[ -d $D && ! -f $D/made && -n $(ls -A "$D") ]]; then
	die "$D holds files no bundle made: move them away"
fi

# make's output only when it fails (the static link's glibc warnings are
# about NSS modules udpdrop never loads: the Makefile says why)
build() { # $1: what, then make's arguments
	local what=$1 log
	shift
	log=$(mktemp /tmp/bench-bundle-make.XXXXXX)
	if ! make -s "$@" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$log"
		die "cannot build $what"
	fi
	rm -f "$log"
}

build "udpdrop, the floor and tracecat" udpdrop static .output/bench-floor .output/tests/tracecat

rm -rf "$D"
mkdir -p "$D/bin" "$D/lib" "$D/wrap"
cp udpdrop-static "$D/bin/udpdrop"
cc -O2 -pthread -static -o "$D/bin/bench-storm" tools/bench/storm.c

if [[ -n $BASELINE_REV ]]; then
	wt=$(mktemp -d /tmp/bench-bundle.XXXXXX)
	trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"; git worktree prune' EXIT
	git worktree add --detach -q "$wt" "$BASELINE_REV" ||
		die "BASELINE_REV=$BASELINE_REV: no such commit"
	build "$BASELINE_REV's udpdrop-static" -C "$wt" static
	cp "$wt/udpdrop-static" "$D/bin/udpdrop-base"
fi

# A program in bin/. A dynamic one also gets its libraries (and the
# loader) in lib/ and a wrapper in wrap/ that runs it with them alone; a
# static one's wrapper runs it as it is.
bundle() { # $1: path, $2: name
	local lib loader= missing
	cp "$1" "$D/bin/$2"
	if ! ldd "$1" >/dev/null 2>&1; then # "not a dynamic executable"
		printf '#!/bin/sh\nexec "$(dirname "$(readlink -f "$0")")/../bin/%s" "$@"\n' "$2" >"$D/wrap/$2"
		chmod +x "$D/wrap/$2"
		return
	fi
	missing=$(ldd "$1" | awk '/not found/ { print $1 }' | paste -sd' ' -)
	[[ -z $missing ]] || die "$1 needs $missing, which this machine lacks"
	while read -r lib; do
		[[ -n $lib ]] || continue
		cp -L "$lib" "$D/lib/"
		[[ $lib == */ld-linux* ]] && loader=${lib##*/}
	done < <(ldd "$1" | awk '/=> \// { print $3 } /^[[:space:]]*\/.*ld-linux/ { print $1 }')
	[[ -n $loader ]] || die "$1: no dynamic loader in its ldd"
	cat >"$D/wrap/$2" <<EOF
#!/bin/sh
# $2 with the bundle's loader and libraries (tools/bench-bundle.sh)
d=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/bin/$2" "\$@"
EOF
	chmod +x "$D/wrap/$2"
}

bundle "$(command -v bpftool)" bpftool
bundle "$(command -v jq)" jq
bundle .output/bench-floor bench-floor
bundle .output/tests/tracecat tracecat

cat >"$D/run.sh" <<'EOF'
#!/usr/bin/env bash
# tools/bench.sh with this bundle's programs (made by tools/bench-bundle.sh),
# in the repository root the bundle sits in. The tree's .output/ is left
# alone: bench.sh is told where each program is.
set -euo pipefail
B=$(cd "$(dirname "$0")" && pwd)
cd "$B/.."
[[ -x tools/bench.sh ]] || { echo "run.sh: $B/.. is not the udpdrop repository" >&2; exit 1; }
export PATH="$B/wrap:$PATH"
export UDPDROP=${UDPDROP:-$B/bin/udpdrop}
export STORM="$B/bin/bench-storm" FLOOR="$B/wrap/bench-floor" TRACECAT="$B/wrap/tracecat"
if [[ -x $B/bin/udpdrop-base ]]; then
	export BASELINE=${BASELINE-$B/bin/udpdrop-base}
fi
echo "bundle: $B ($(cat "$B/made"))"
exec tools/bench.sh
EOF
chmod +x "$D/run.sh"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes)${BASELINE_REV:+, baseline $BASELINE_REV}, made $(date -u +%FT%TZ) on $(uname -r)" >"$D/made"

# every wrapper must run here, with nothing but the bundle's libraries
"$D/wrap/bpftool" version >/dev/null || die "the bundled bpftool does not run"
echo '{"a":1}' | "$D/wrap/jq" -e .a >/dev/null || die "the bundled jq does not run"
rc=0
"$D/wrap/tracecat" 2>/dev/null || rc=$? # no FILE: its usage, exit 2
((rc == 2)) || die "the bundled tracecat does not run (exit $rc)"
# the floor attaches as it starts: its libraries are listed, not run
if "$D"/lib/ld-linux* --library-path "$D/lib" --list "$D/bin/bench-floor" | grep -q 'not found'; then
	die "the bundled bench-floor lacks a library"
fi
echo "bench-bundle: $D, $(du -sh "$D" | cut -f1) ($(cat "$D/made")); carry it and run $D/run.sh"
