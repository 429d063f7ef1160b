// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command the static-binary tests give `udpdrop record --`: linked
 * statically itself, so it runs in a root that holds nothing else. Prints
 * who it runs as, as the kernel has it (no name lookups):
 *   uid U gid G groups G1 G2 ... home HOME (- when unset or empty)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	gid_t groups[256];
	int n = getgroups(256, groups);
	const char *home = getenv("HOME");

	if (n < 0) {
		perror("getgroups");
		return 1;
	}
	printf("uid %u gid %u groups", (unsigned)getuid(), (unsigned)getgid());
	for (int i = 0; i < n; i++)
		printf(" %u", (unsigned)groups[i]);
	printf(" home %s\n", home && *home ? home : "-");
	return 0;
}
