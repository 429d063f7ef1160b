#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Boot a Debian kernel under QEMU (TCG, no KVM) and run one command in it.
#
#   tests/kernels/boot.sh [OPTIONS] KERNEL [--] COMMAND [ARG...]
#
#   KERNEL    bullseye (5.10), bookworm (6.1), trixie (6.12) or sid (newest),
#             fetched into the cache by tests/kernels/fetch.sh if missing
#   COMMAND   runs as root in the guest, in the caller's current directory
#             (the host's / is the guest's root: read-only over 9p with a
#             tmpfs overlay on top, so the built tree and the host's tools
#             are there; writes stay in the guest)
#   --results DIR  keep the run's files in DIR (default: a temp dir, removed):
#             console.log (everything the guest printed), rc (COMMAND's exit
#             status). The guest sees DIR, writable, at $UDPDROP_RESULTS.
#   --timeout SECS  kill the guest after SECS (default 1800): exit 125
#   --smp N   virtual CPUs (default 1; N > 1 uses multi-threaded TCG)
#   --mem SIZE  guest memory (default 2G)
#
# Exit status: COMMAND's, or 125 when the guest did not say (no boot, a
# panic, a timeout), with one line naming the kernel and why.
# The guest has: proc, sys, devtmpfs, devpts, fresh tmpfs on /tmp and /run
# (the current directory stays visible at its path even if under them),
# bpffs at /sys/fs/bpf, debugfs, tracefs at /sys/kernel/tracing, cgroup2 at
# /sys/fs/cgroup, the kernel's own modules at /lib/modules/$(uname -r)
# (modprobe works, and the kernel's own module loading), lo up, no NIC.
# Passed into the guest: PATH, TERM and every variable named UDPDROP*,
# TOP_INTERVAL or listed (space-separated names) in UDPDROP_GUEST_ENV.
# Cache: see fetch.sh (UDPDROP_KERNELS_CACHE, default /var/cache/udpdrop-kernels).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${UDPDROP_KERNELS_CACHE:-/var/cache/udpdrop-kernels}
timeout_s=${UDPDROP_BOOT_TIMEOUT:-1800} smp=1 mem=2G results=

die() { echo "boot: $*" >&2; exit 125; }
usage() { sed -n '4,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

while (($#)); do
	case $1 in
	--results) results=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "boot: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
(($# >= 2)) || usage
kernel=$1
shift
[[ $1 == -- ]] && shift
(($#)) || usage
[[ $timeout_s =~ ^[0-9]+$ && $smp =~ ^[0-9]+$ ]] || { echo "boot: --timeout and --smp take whole numbers" >&2; exit 2; }

command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64: run tools/deps.sh"
[[ -x /bin/busybox ]] || die "no /bin/busybox (busybox-static): run tools/deps.sh"
[[ $(id -u) == 0 ]] || { echo "boot: needs root (the guest reads the host's / as root)" >&2; exit 3; }

"$HERE/fetch.sh" "$kernel" >&2 || die "$kernel: cannot fetch the kernel"
kdir=$CACHE/$kernel
ver=$(cat "$kdir/version")
moddir=$kdir/lib/modules/$ver

work=$(mktemp -d /tmp/udpdrop-boot.XXXXXX)
qpid=
cleanup() {
	[[ -n $qpid ]] && kill -KILL "$qpid" 2>/dev/null
	rm -rf "$work"
	[[ -n $keep_results ]] || rm -rf "$results"
}
keep_results=$results
trap cleanup EXIT
if [[ -z $results ]]; then
	results=$work.results
	mkdir "$results"
else
	mkdir -p "$results"
	results=$(cd "$results" && pwd)
	rm -f "$results/rc" "$results/console.log" "$results/cmd" "$results/env"
fi

# --- the initramfs: busybox, the modules that mount the root, /init -------
mkdir -p "$work/initrd/bin" "$work/initrd/m"
cp /bin/busybox "$work/initrd/bin/busybox"
declare -A seen=()
order=()
visit() { # PATH (relative, as modules.dep names it): its dependencies first
	local m=$1 d
	[[ -n ${seen[$m]:-} ]] && return
	seen[$m]=1
	for d in $(awk -v m="$m:" '$1 == m { $1 = ""; print }' "$moddir/modules.dep"); do
		visit "$d"
	done
	order+=("$m")
}
for name in virtio_pci 9pnet_virtio 9p overlay; do
	# builtin where modules.dep does not list it
	m=$(awk -F: -v n="/$name.ko" 'substr($1, length($1) - length(n) + 1) == n { print $1; exit }' "$moddir/modules.dep")
	[[ -n $m ]] && visit "$m"
done
for m in "${order[@]}"; do
	cp "$moddir/$m" "$work/initrd/m/"
	basename "$m"
done >"$work/initrd/m/order"
cat >"$work/initrd/init" <<-'INIT'
	#!/bin/busybox sh
	/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin /lower /rw /newroot
	/bin/busybox --install -s
	mount -t proc proc /proc
	mount -t devtmpfs dev /dev
	stage1_fail() { echo "boot-guest: $*"; echo o >/proc/sysrq-trigger; sleep 60; }
	for m in $(cat /m/order); do insmod /m/$m || stage1_fail "insmod $m failed"; done
	for a in $(cat /proc/cmdline); do
		case $a in udpdrop.*=*) k=${a%%=*}; eval "${k#udpdrop.}=\${a#*=}" ;; esac
	done
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower ||
		stage1_fail "cannot mount the host's / over 9p"
	mount -t tmpfs -o mode=755 rw /rw && mkdir /rw/upper /rw/work &&
	mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
		stage1_fail "cannot mount the overlay"
	mkdir -p /newroot/udpdrop-results "/newroot/lib/modules/$kver" &&
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /newroot/udpdrop-results ||
		stage1_fail "cannot mount the results share"
	mount --bind "/newroot$moddir" "/newroot/lib/modules/$kver" ||
		stage1_fail "cannot bind $moddir"
	umount /proc /dev
	exec switch_root /newroot "$stage2"
	INIT
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

# --- the command, its directory and environment, for stage 2 --------------
printf '%s\0' "$@" >"$results/cmd"
pwd >"$results/cwd"
{
	for v in PATH TERM TOP_INTERVAL ${UDPDROP_GUEST_ENV:-} $(compgen -v UDPDROP || true); do
		[[ $v == UDPDROP_KERNELS_* || $v == UDPDROP_GUEST_ENV ]] && continue
		[[ -v $v ]] && declare -p "$v" | sed 's/^declare -[a-zA-Z-]* /export /'
	done
	echo "export UDPDROP_RESULTS=/udpdrop-results"
} >"$results/env" 2>/dev/null

accel=tcg
((smp > 1)) && accel=tcg,thread=multi
append="console=ttyS0 loglevel=4 panic=-1 mitigations=off random.trust_cpu=on"
append+=" rdinit=/init udpdrop.kver=$ver udpdrop.moddir=$moddir udpdrop.stage2=$HERE/guest-init.sh"
start=${EPOCHREALTIME/./}
echo "boot: $kernel ($ver), $smp vCPU, $mem, TCG; log in $results/console.log" >&2
# the console: live to stdout (without the serial line's \r) and to the log
set +e
timeout -s KILL "$timeout_s" qemu-system-x86_64 \
	-accel "$accel" -cpu max -smp "$smp" -m "$mem" \
	-nodefaults -no-user-config -display none -no-reboot \
	-serial stdio -nic none \
	-kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" -append "$append" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=results,path="$results",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=results,mount_tag=results \
	</dev/null 2>&1 | tr -d '\r' | tee "$results/console.log"
qrc=${PIPESTATUS[0]}
set -e
secs=$(((${EPOCHREALTIME/./} - start) / 1000000))
if [[ -s $results/rc ]]; then
	rc=$(cat "$results/rc")
	echo "boot: $kernel ($ver): exit $rc after $secs s" >&2
	exit "$rc"
fi
if ((qrc == 137)); then
	die "$kernel ($ver): guest did not finish in $timeout_s s: killed${keep_results:+ (log: $results/console.log)}"
fi
die "$kernel ($ver): guest ended without an exit status (qemu exit $qrc; last lines: $(tail -n 3 "$results/console.log" | tr '\n' '|'))"
