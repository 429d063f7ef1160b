/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An open-addressing hash map from fixed-size byte keys to a user value
 * slot, used by the aggregator (keys: struct ud_key, socket ids). Slots
 * are stable until the table grows; entries are never removed one by one
 * (only htab__clear), which keeps probing simple.
 */
#ifndef UD_HTAB_H
#define UD_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct htab {
	size_t key_size, val_size;
	size_t cap, n;  /* cap is a power of two */
	uint8_t *used;  /* one byte per slot */
	uint8_t *keys;
	uint8_t *vals;
};

int htab__init(struct htab *h, size_t key_size, size_t val_size);
void htab__free(struct htab *h);
void htab__clear(struct htab *h);
/* The value slot for key, or NULL. */
void *htab__find(const struct htab *h, const void *key);
/* The value slot for key, created zeroed if absent; NULL on ENOMEM. */
void *htab__upsert(struct htab *h, const void *key, int *created);
/*
 * Keep only the entries keep(key, val, arg) says to, in a table sized for
 * them (entries are never removed one by one: this rebuilds it, so that a
 * long run's tables shrink as well as grow). 0, or -ENOMEM with h as it
 * was. Value slots move.
 */
int htab__retain(struct htab *h, bool (*keep)(const void *key, void *val, void *arg),
		 void *arg);
/* Iterate: for (size_t i = 0; htab__next(h, &i, &k, &v);) */
int htab__next(const struct htab *h, size_t *iter, const void **key,
	       void **val);

#endif
