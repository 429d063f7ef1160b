#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Stage 2 of tests/kernels/boot.sh: PID 1 in the guest, on the overlay over
# the host's /. Mounts what the tests need, runs the command boot.sh left
# in the results share, writes its exit status there, powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
R=/udpdrop-results
# started now, waited on at the end: once the results share is unmounted
# and power-off begins, nothing more is read over 9p
sleep 600 &
idler=$!
poweroff() {
	sync
	umount "$R" 2>/dev/null
	echo o >/proc/sysrq-trigger
	wait "$idler"
}
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o ptmxmode=666 devpts /dev/pts
mount -t tmpfs shm /dev/shm
# the tree the command runs in (a CI clone may live under /tmp): kept
# visible at its path under the fresh tmpfs mounts
cwd=$(cat "$R/cwd")
mkdir -p /udpdrop-cwd && mount --bind "$cwd" /udpdrop-cwd
for d in /tmp /run /var/tmp; do mount -t tmpfs -o mode=1777 tmp "$d"; done
if [[ ! -d $cwd ]]; then
	mkdir -p "$cwd" && mount --bind /udpdrop-cwd "$cwd"
fi
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
	[[ -d /sys/kernel/tracing/events ]] || echo "guest: no tracefs"
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo 1 >/proc/sys/kernel/sysrq
hostname udpdrop-guest
ip link set lo up
stty -onlcr </dev/console 2>/dev/null
echo "guest: $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s (uptime), $(nproc) CPU"

mapfile -d '' cmd <"$R/cmd"
. "$R/env"
cd "$cwd" || { echo 126 >"$R/rc"; poweroff; }
"${cmd[@]}" </dev/null
rc=$?
echo "guest: exit $rc after $(cut -d' ' -f1 /proc/uptime) s (uptime)"
echo "$rc" >"$R/rc"
poweroff
