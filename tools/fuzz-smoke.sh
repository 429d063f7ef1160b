#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check.sh's fuzz tier: 10 s of the trace reader's fuzz target over the seed
# corpus (make fuzz-smoke), as one result line. A crash or a sanitizer
# report fails it; the reproducer is left in the current directory.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if make --no-print-directory fuzz-smoke; then
	echo "fuzz: 1 passed, 0 failed"
else
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
