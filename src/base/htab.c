// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"

/* FNV-1a: keys are small and hashed once per interval each. */
static uint64_t hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int alloc_slots(struct htab *h, size_t cap)
{
	h->used = calloc(cap, 1);
	h->keys = calloc(cap, h->key_size);
	h->vals = calloc(cap, h->val_size);
	if (!h->used || !h->keys || !h->vals) {
		free(h->used);
		free(h->keys);
		free(h->vals);
		return -ENOMEM;
	}
	h->cap = cap;
	return 0;
}

int htab__init(struct htab *h, size_t key_size, size_t val_size)
{
	memset(h, 0, sizeof(*h));
	h->key_size = key_size;
	h->val_size = val_size;
	return alloc_slots(h, 64);
}

void htab__free(struct htab *h)
{
	free(h->used);
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

void htab__clear(struct htab *h)
{
	memset(h->used, 0, h->cap);
	memset(h->vals, 0, h->cap * h->val_size);
	h->n = 0;
}

static size_t probe(const struct htab *h, const void *key, int *found)
{
	size_t mask = h->cap - 1, i = hash(key, h->key_size) & mask;

	while (h->used[i]) {
		if (!memcmp(h->keys + i * h->key_size, key, h->key_size)) {
			*found = 1;
			return i;
		}
		i = (i + 1) & mask;
	}
	*found = 0;
	return i;
}

void *htab__find(const struct htab *h, const void *key)
{
	int found;
	size_t i;

	if (!h->cap)
		return NULL;
	i = probe(h, key, &found);
	return found ? h->vals + i * h->val_size : NULL;
}

static int grow(struct htab *h)
{
	struct htab old = *h;

	if (alloc_slots(h, old.cap * 2)) {
		*h = old;
		return -ENOMEM;
	}
	h->n = 0;
	for (size_t i = 0; i < old.cap; i++) {
		int found;
		size_t j;

		if (!old.used[i])
			continue;
		j = probe(h, old.keys + i * old.key_size, &found);
		h->used[j] = 1;
		memcpy(h->keys + j * h->key_size, old.keys + i * old.key_size,
		       h->key_size);
		memcpy(h->vals + j * h->val_size, old.vals + i * old.val_size,
		       h->val_size);
		h->n++;
	}
	free(old.used);
	free(old.keys);
	free(old.vals);
	return 0;
}

void *htab__upsert(struct htab *h, const void *key, int *created)
{
	int found;
	size_t i;

	if ((h->n + 1) * 4 > h->cap * 3 && grow(h))
		return NULL;
	i = probe(h, key, &found);
	if (created)
		*created = !found;
	if (!found) {
		h->used[i] = 1;
		memcpy(h->keys + i * h->key_size, key, h->key_size);
		memset(h->vals + i * h->val_size, 0, h->val_size);
		h->n++;
	}
	return h->vals + i * h->val_size;
}

int htab__next(const struct htab *h, size_t *iter, const void **key,
	       void **val)
{
	for (size_t i = *iter; i < h->cap; i++) {
		if (!h->used[i])
			continue;
		*key = h->keys + i * h->key_size;
		*val = h->vals + i * h->val_size;
		*iter = i + 1;
		return 1;
	}
	return 0;
}

int htab__retain(struct htab *h, bool (*keep)(const void *key, void *val, void *arg),
		 void *arg)
{
	struct htab kept;
	size_t it = 0;
	const void *key;
	void *val;

	if (htab__init(&kept, h->key_size, h->val_size))
		return -ENOMEM;
	while (htab__next(h, &it, &key, &val)) {
		void *v;

		if (!keep(key, val, arg))
			continue;
		v = htab__upsert(&kept, key, NULL);
		if (!v) {
			htab__free(&kept);
			return -ENOMEM;
		}
		memcpy(v, val, h->val_size);
	}
	htab__free(h);
	*h = kept;
	return 0;
}
