#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# in-empty-root.sh ROOT PROGRAM [ARGS...]: run /PROGRAM's basename inside
# ROOT, a directory that holds nothing but that file: chroot in a private
# mount namespace that has proc, sysfs and bpffs mounted under ROOT (so
# they go away with it, and the host's mounts stay as they are). No /dev,
# no /etc, no /lib, no /usr: what the static binary finds is the kernel.
# Execs all the way down: the program keeps this script's pid (tests
# signal it).
[ $# -ge 2 ] || { echo "usage: $0 ROOT PROGRAM [ARGS...]" >&2; exit 2; }
root=$1 prog=/$(basename "$2")
shift 2
[ -x "$root$prog" ] || { echo "$0: no $root$prog: copy the program there first" >&2; exit 2; }
exec unshare -m --propagation private sh -c '
	root=$1 prog=$2
	shift 2
	mkdir -p "$root/proc" "$root/sys" &&
	mount -t proc proc "$root/proc" &&
	mount -t sysfs sysfs "$root/sys" &&
	mount -t bpf bpf "$root/sys/fs/bpf" || exit 1
	exec chroot "$root" "$prog" "$@"' in-empty-root "$root" "$prog" "$@"
