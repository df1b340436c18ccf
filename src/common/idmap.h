/* idmap: a hash map from 64-bit job ids to pointers (open addressing, linear probing,
 * backward-shift deletion, so lookups never wade through tombstones). */
#ifndef DUCTILE_IDMAP_H
#define DUCTILE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct idmap idmap_t;

idmap_t *idmap_create(void);
void idmap_destroy(idmap_t *m);
/* 0 on success, -1 if the key is present already or memory ran out. */
int idmap_put(idmap_t *m, int64_t key, void *val);
void *idmap_get(const idmap_t *m, int64_t key);
/* Removes and returns the value, or NULL. */
void *idmap_del(idmap_t *m, int64_t key);
size_t idmap_count(const idmap_t *m);
/* Calls fn for every entry (order unspecified); the map must not change meanwhile. */
void idmap_foreach(const idmap_t *m, void (*fn)(int64_t key, void *val, void *arg), void *arg);
/* Counters kept in a map (a count per key, absent when 0): the count, and a change. */
int idmap_tally_get(const idmap_t *m, int64_t key);
void idmap_tally_add(idmap_t *m, int64_t key, int d);
/* qsort's comparison of two int64_t keys, rising: keys collected by idmap_foreach in order */
int idmap_cmp_key(const void *a, const void *b);

#endif
