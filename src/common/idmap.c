#include "idmap.h"

#include <stdbool.h>
#include <stdlib.h>

struct slot {
    int64_t key;
    void *val; /* NULL marks an empty slot: values are never NULL */
};

struct idmap {
    struct slot *s;
    size_t cap; /* power of two */
    size_t n;
};

/* Job ids are mostly consecutive: four consecutive ids (one 64-byte line of slots)
 * stay together, the groups are scattered by a full mix. Larger groups would save
 * more cache misses but make long runs of full slots for linear probing. */
static size_t hash(int64_t k)
{
    uint64_t x = (uint64_t)k >> 2;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return (size_t)((x << 2) | ((uint64_t)k & 3));
}

idmap_t *idmap_create(void)
{
    idmap_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cap = 64;
    m->s = calloc(m->cap, sizeof(struct slot));
    if (!m->s) {
        free(m);
        return NULL;
    }
    return m;
}

void idmap_destroy(idmap_t *m)
{
    if (!m)
        return;
    free(m->s);
    free(m);
}

static bool insert(struct slot *s, size_t cap, int64_t key, void *val)
{
    size_t i = hash(key) & (cap - 1);
    while (s[i].val) {
        if (s[i].key == key)
            return false;
        i = (i + 1) & (cap - 1);
    }
    s[i].key = key;
    s[i].val = val;
    return true;
}

static int grow(idmap_t *m)
{
    size_t ncap = m->cap * 2;
    struct slot *ns = calloc(ncap, sizeof(struct slot));
    if (!ns)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].val)
            insert(ns, ncap, m->s[i].key, m->s[i].val);
    free(m->s);
    m->s = ns;
    m->cap = ncap;
    return 0;
}

int idmap_put(idmap_t *m, int64_t key, void *val)
{
    if (!val)
        return -1;
    if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
        return -1;
    if (!insert(m->s, m->cap, key, val))
        return -1;
    m->n++;
    return 0;
}

void *idmap_get(const idmap_t *m, int64_t key)
{
    size_t i = hash(key) & (m->cap - 1);
    while (m->s[i].val) {
        if (m->s[i].key == key)
            return m->s[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

void *idmap_del(idmap_t *m, int64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = hash(key) & mask;
    while (m->s[i].val && m->s[i].key != key)
        i = (i + 1) & mask;
    if (!m->s[i].val)
        return NULL;
    void *val = m->s[i].val;
    /* Backward-shift: move later entries of the probe run into the hole when their
     * home slot does not lie cyclically in (hole, j]. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->s[j].val)
            break;
        size_t home = hash(m->s[j].key) & mask;
        bool between = (hole <= j) ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            m->s[hole] = m->s[j];
            hole = j;
        }
    }
    m->s[hole].val = NULL;
    m->n--;
    return val;
}

size_t idmap_count(const idmap_t *m) { return m->n; }

void idmap_foreach(const idmap_t *m, void (*fn)(int64_t, void *, void *), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].val)
            fn(m->s[i].key, m->s[i].val, arg);
}

int idmap_cmp_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int idmap_tally_get(const idmap_t *m, int64_t key) { return (int)(intptr_t)idmap_get(m, key); }

void idmap_tally_add(idmap_t *m, int64_t key, int d)
{
    intptr_t n = (intptr_t)idmap_del(m, key) + d;
    if (n > 0)
        idmap_put(m, key, (void *)n);
}
