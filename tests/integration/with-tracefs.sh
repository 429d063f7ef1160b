#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run a command with tracefs mounted at /sys/kernel/tracing, in a private
# mount namespace, so the host's mounts stay as they are. Execs all the
# way down: the command keeps this script's pid (tests signal it).
exec unshare -m sh -c '
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing || exit 4
	exec "$@"' with-tracefs "$@"
