// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One socket, one row: see sockid.h. */
#include <errno.h>
#include "sockid.h"

int sockid__init(struct htab *inode2cookie)
{
	return htab__init(inode2cookie, sizeof(uint32_t), sizeof(uint64_t));
}

int sockid__learn(struct htab *inode2cookie, uint32_t inode, uint64_t cookie)
{
	uint64_t *c;

	if (!sockid__joins(inode, cookie))
		return 0;
	c = htab__upsert(inode2cookie, &inode, NULL);
	if (!c)
		return -ENOMEM;
	*c = cookie;
	return 0;
}

uint64_t sockid__row(const struct htab *inode2cookie, uint64_t id)
{
	uint32_t ino = sockid__inode(id);
	const uint64_t *c = ino && inode2cookie->cap ? htab__find(inode2cookie, &ino) : NULL;

	return sockid__join(id, c ? *c : 0);
}
