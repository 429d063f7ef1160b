#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetch and unpack a Debian kernel for the kernel matrix, once; later runs
# use the cache and need no network.
#
#   tests/kernels/fetch.sh RELEASE...     (bullseye bookworm trixie sid)
#
# apt runs with a PRIVATE state directory under the cache (its own
# sources.list, lists, archives): the host's apt sources and state are never
# read or changed. Per release the cache holds:
#   $CACHE/RELEASE/vmlinuz               the kernel
#   $CACHE/RELEASE/lib/modules/VERSION/  its modules, decompressed, depmod'ed
#   $CACHE/RELEASE/version               VERSION (uname -r in the guest)
#   $CACHE/RELEASE/package               the Debian package and version
# UDPDROP_KERNELS_CACHE: the cache (default /var/cache/udpdrop-kernels).
# UDPDROP_KERNELS_REFRESH=1: ask the mirror again and fetch a newer kernel.
# UDPDROP_KERNELS_MIRROR: the Debian mirror (default http://deb.debian.org/debian).
# A kernel that cannot be fetched is an error (exit 1), never a skip.
set -euo pipefail

CACHE=${UDPDROP_KERNELS_CACHE:-/var/cache/udpdrop-kernels}
MIRROR=${UDPDROP_KERNELS_MIRROR:-http://deb.debian.org/debian}
RELEASES=(bullseye bookworm trixie sid)

die() { echo "fetch: $*" >&2; exit 1; }

(($#)) || die "usage: $0 RELEASE... (one of: ${RELEASES[*]})"

APTD=$CACHE/apt
aptopts=(-o "Dir::State=$APTD/state" -o "Dir::State::status=$APTD/state/status"
	-o "Dir::Cache=$APTD/cache" -o "Dir::Etc::SourceList=$APTD/sources.list"
	-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null
	-o Dir::Etc::PreferencesParts=/dev/null -o APT::Sandbox::User=root)

updated=0
apt_update() {
	((updated)) && return 0
	mkdir -p "$APTD/state/lists/partial" "$APTD/cache/archives/partial"
	touch "$APTD/state/status"
	local s
	for s in "${RELEASES[@]}"; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $s main"
	done >"$APTD/sources.list"
	[[ -r /usr/share/keyrings/debian-archive-keyring.gpg ]] ||
		die "no /usr/share/keyrings/debian-archive-keyring.gpg: install debian-archive-keyring"
	echo "fetch: apt-get update (private state in $APTD)"
	apt-get "${aptopts[@]}" -qq update || die "apt-get update failed (mirror $MIRROR)"
	updated=1
}

fetch_one() { # RELEASE
	local rel=$1 dir=$CACHE/$1 meta image deb ver tmp
	[[ " ${RELEASES[*]} " == *" $rel "* ]] || die "unknown release '$rel' (one of: ${RELEASES[*]})"
	if [[ -s $dir/version && -s $dir/vmlinuz && ${UDPDROP_KERNELS_REFRESH:-0} != 1 ]]; then
		echo "fetch: $rel: cached $(cat "$dir/package")"
		return 0
	fi
	apt_update
	# the meta package's version in that suite, then the image it depends on
	meta=$(apt-cache "${aptopts[@]}" madison linux-image-amd64 |
		awk -F' *[|] *' -v s=" $rel/main " '(" " $3 " ") ~ s { print $2; exit }')
	[[ -n $meta ]] || die "$rel: no linux-image-amd64 in $MIRROR $rel"
	image=$(apt-cache "${aptopts[@]}" show "linux-image-amd64=$meta" |
		sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' |
		sed -n 's/^ *\(linux-image-[^ ]*\) (= \([^)]*\)).*/\1=\2/p' | head -1)
	[[ -n $image ]] || die "$rel: linux-image-amd64 $meta names no linux-image package"
	if [[ -s $dir/package && $(cat "$dir/package") == "$image" ]]; then
		echo "fetch: $rel: $image is current"
		return 0
	fi
	# newer kernels split the image: linux-image-V depends on
	# linux-binary-V (vmlinuz), linux-modules-V and linux-base-V (config,
	# modules.builtin) of the same version
	local pkgs=("$image")
	pkgs+=($(apt-cache "${aptopts[@]}" show "$image" | sed -n 's/^Depends: //p' |
		head -1 | tr ',|' '\n\n' |
		sed -n 's/^ *\(linux-\(binary\|modules\|base\)-[^ ]*\) (= \([^)]*\)).*/\1=\3/p'))
	echo "fetch: $rel: downloading ${pkgs[*]}"
	tmp=$(mktemp -d "$CACHE/.fetch-$rel.XXXXXX")
	trap 'rm -rf "$tmp"' RETURN
	# -o APT::Sandbox::User=root: the private dir is not _apt's to write
	(cd "$tmp" && apt-get "${aptopts[@]}" -qq download "${pkgs[@]}") ||
		die "$rel: apt-get download ${pkgs[*]} failed"
	mkdir "$tmp/x"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$tmp/x" || die "$rel: cannot unpack $deb"
	done
	deb=${pkgs[*]}
	ver=$(ls "$tmp/x/lib/modules" "$tmp/x/usr/lib/modules" 2>/dev/null | grep -v '^/\|^$' || true)
	[[ $(wc -w <<<"$ver") == 1 ]] || die "$rel: $deb holds modules for '$ver', want one version"
	mkdir -p "$tmp/k/lib/modules"
	local mods=$tmp/x/lib/modules/$ver
	[[ -d $mods ]] || mods=$tmp/x/usr/lib/modules/$ver
	# /boot/vmlinuz-V, or (linux-binary-V) /usr/lib/modules/V/vmlinuz
	if [[ -f $tmp/x/boot/vmlinuz-$ver ]]; then
		mv "$tmp/x/boot/vmlinuz-$ver" "$tmp/k/vmlinuz"
	else
		mv "$mods/vmlinuz" "$tmp/k/vmlinuz" || die "$rel: no vmlinuz in $deb"
	fi
	mv "$mods" "$tmp/k/lib/modules/" || die "$rel: no modules in $deb"
	# decompress the modules (.ko.xz, .ko.zst): busybox insmod in the
	# initramfs and any modprobe then read them as they are
	find "$tmp/k/lib/modules" -name '*.ko.xz' -print0 | xargs -0 -r -n 64 xz -d
	find "$tmp/k/lib/modules" -name '*.ko.zst' -print0 | xargs -0 -r -n 64 zstd -q -d --rm
	find "$tmp/k/lib/modules" -name '*.ko.gz' -print0 | xargs -0 -r -n 64 gzip -d
	depmod -b "$tmp/k" "$ver" || die "$rel: depmod failed"
	echo "$ver" >"$tmp/k/version"
	echo "$image" >"$tmp/k/package"
	rm -rf "$dir.old"
	[[ -e $dir ]] && mv "$dir" "$dir.old"
	mv "$tmp/k" "$dir"
	rm -rf "$dir.old"
	rm -f "$APTD/cache/archives/"*.deb
	echo "fetch: $rel: $image ($ver) in $dir"
}

mkdir -p "$CACHE"
for r in "$@"; do fetch_one "$r"; done
