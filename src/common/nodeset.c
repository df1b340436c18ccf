#include "nodeset.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nodeset {
    int size;
    int nwords;
    int lo; /* no set bit below word lo: where searches for set bits start */
    uint64_t *w;
};

nodeset_t *nodeset_create(int size)
{
    if (size < 0)
        return NULL;
    nodeset_t *ns = calloc(1, sizeof(*ns));
    if (!ns)
        return NULL;
    ns->size = size;
    ns->nwords = (size + 63) / 64;
    ns->w = calloc((size_t)(ns->nwords ? ns->nwords : 1), sizeof(uint64_t));
    if (!ns->w) {
        free(ns);
        return NULL;
    }
    return ns;
}

void nodeset_destroy(nodeset_t *ns)
{
    if (!ns)
        return;
    free(ns->w);
    free(ns);
}

int nodeset_size(const nodeset_t *ns) { return ns->size; }

void nodeset_set(nodeset_t *ns, int i)
{
    if (i >= 0 && i < ns->size) {
        ns->w[i >> 6] |= UINT64_C(1) << (i & 63);
        if ((i >> 6) < ns->lo)
            ns->lo = i >> 6;
    }
}

void nodeset_clear(nodeset_t *ns, int i)
{
    if (i >= 0 && i < ns->size)
        ns->w[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

bool nodeset_test(const nodeset_t *ns, int i)
{
    if (i < 0 || i >= ns->size)
        return false;
    return (ns->w[i >> 6] >> (i & 63)) & 1;
}

void nodeset_set_all(nodeset_t *ns)
{
    for (int k = 0; k < ns->nwords; k++)
        ns->w[k] = ~UINT64_C(0);
    if (ns->size & 63)
        ns->w[ns->nwords - 1] = (UINT64_C(1) << (ns->size & 63)) - 1;
    ns->lo = 0;
}

void nodeset_clear_all(nodeset_t *ns)
{
    memset(ns->w, 0, (size_t)ns->nwords * sizeof(uint64_t));
    ns->lo = ns->nwords;
}

int nodeset_count(const nodeset_t *ns)
{
    int c = 0;
    for (int k = 0; k < ns->nwords; k++)
        c += __builtin_popcountll(ns->w[k]);
    return c;
}

int nodeset_take_lowest(nodeset_t *ns, int k, int *out)
{
    int got = 0;
    for (int w = ns->lo; w < ns->nwords && got < k; w++) {
        uint64_t word = ns->w[w];
        if (!word)
            continue;
        int base = w << 6;
        if (word == ~UINT64_C(0) && k - got >= 64) {
            /* A whole free word: 64 consecutive indices, no bit twiddling. */
            for (int b = 0; b < 64; b++)
                out[got + b] = base + b;
            got += 64;
            word = 0;
        } else if (k - got >= 64) { /* any word's bits fit: no need to count */
            do {
                out[got++] = base + __builtin_ctzll(word);
                word &= word - 1;
            } while (word);
        } else {
            while (word && got < k) {
                out[got++] = base + __builtin_ctzll(word);
                word &= word - 1;
            }
        }
        ns->w[w] = word;
    }
    while (ns->lo < ns->nwords && !ns->w[ns->lo])
        ns->lo++;
    return got;
}

/* Word w of ns restricted to mask and not in avoid. */
static uint64_t word_in(const nodeset_t *ns, const nodeset_t *mask, const nodeset_t *avoid, int w)
{
    uint64_t word = ns->w[w];
    if (mask)
        word &= w < mask->nwords ? mask->w[w] : 0;
    if (avoid && w < avoid->nwords)
        word &= ~avoid->w[w];
    return word;
}

int nodeset_count_in(const nodeset_t *ns, const nodeset_t *mask, const nodeset_t *avoid)
{
    int c = 0;
    for (int w = ns->lo; w < ns->nwords; w++)
        c += __builtin_popcountll(word_in(ns, mask, avoid, w));
    return c;
}

int nodeset_take_lowest_in(nodeset_t *ns, const nodeset_t *mask, const nodeset_t *avoid, int k,
                           int *out)
{
    int got = 0;
    for (int w = ns->lo; w < ns->nwords && got < k; w++) {
        uint64_t word = word_in(ns, mask, avoid, w);
        while (word && got < k) {
            uint64_t bit = word & -word;
            out[got++] = (w << 6) + __builtin_ctzll(word);
            ns->w[w] &= ~bit;
            word &= word - 1;
        }
    }
    while (ns->lo < ns->nwords && !ns->w[ns->lo])
        ns->lo++;
    return got;
}

uint64_t nodeset_hash(const nodeset_t *ns)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the words */
    for (int k = 0; k < ns->nwords; k++)
        h = (h ^ ns->w[k]) * 1099511628211ULL;
    return h;
}

bool nodeset_equal(const nodeset_t *a, const nodeset_t *b)
{
    return a->size == b->size &&
           !memcmp(a->w, b->w, (size_t)a->nwords * sizeof(uint64_t));
}

int nodeset_set_ids(nodeset_t *ns, const nodeset_t *mask, const int *ids, int n)
{
    int set = 0;
    if (!mask) {
        /* Ids of one job are mostly ascending and dense: gather the bits of a run
         * that falls in one word, then touch the word once. */
        int i = 0;
        while (i < n) {
            unsigned id = (unsigned)ids[i];
            if (id >= (unsigned)ns->size) {
                i++;
                continue;
            }
            unsigned wi = id >> 6;
            uint64_t bits = 0, old = ns->w[wi];
            while (i < n && (unsigned)ids[i] < (unsigned)ns->size && ((unsigned)ids[i] >> 6) == wi) {
                uint64_t bit = UINT64_C(1) << (ids[i++] & 63);
                set += !((old | bits) & bit);
                bits |= bit;
            }
            ns->w[wi] = old | bits;
            if ((int)wi < ns->lo)
                ns->lo = (int)wi;
        }
        return set;
    }
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id < 0 || id >= ns->size)
            continue;
        uint64_t bit = UINT64_C(1) << (id & 63);
        if (!(mask->w[id >> 6] & bit))
            continue;
        set += !(ns->w[id >> 6] & bit);
        ns->w[id >> 6] |= bit;
        if ((id >> 6) < ns->lo)
            ns->lo = id >> 6;
    }
    return set;
}

int nodeset_next(const nodeset_t *ns, int from)
{
    if (from < 0)
        from = 0;
    if ((from >> 6) < ns->lo)
        from = ns->lo << 6;
    if (from >= ns->size)
        return -1;
    int k = from >> 6;
    uint64_t word = ns->w[k] & (~UINT64_C(0) << (from & 63));
    for (;;) {
        if (word)
            return (k << 6) + __builtin_ctzll(word);
        if (++k >= ns->nwords)
            return -1;
        word = ns->w[k];
    }
}

/* Appends "a" or "a-b" (with a leading comma unless first) at *pos; counts the full
 * length even when buf is too small. */
static void put_range(char *buf, size_t len, size_t *pos, int a, int b, bool first)
{
    char tmp[32];
    int n = (a == b) ? snprintf(tmp, sizeof(tmp), "%s%d", first ? "" : ",", a)
                     : snprintf(tmp, sizeof(tmp), "%s%d-%d", first ? "" : ",", a, b);
    for (int i = 0; i < n; i++, (*pos)++)
        if (*pos + 1 < len)
            buf[*pos] = tmp[i];
}

static size_t finish(char *buf, size_t len, size_t pos)
{
    if (len)
        buf[pos < len ? pos : len - 1] = '\0';
    return pos;
}

size_t nodeset_format(const nodeset_t *ns, char *buf, size_t len)
{
    size_t pos = 0;
    bool first = true;
    int i = nodeset_next(ns, 0);
    while (i >= 0) {
        int j = i;
        while (j + 1 < ns->size && nodeset_test(ns, j + 1))
            j++;
        put_range(buf, len, &pos, i, j, first);
        first = false;
        i = nodeset_next(ns, j + 1);
    }
    return finish(buf, len, pos);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

size_t nodeset_format_ids(const int *ids, int n, char *buf, size_t len)
{
    size_t pos = 0;
    if (n <= 0)
        return finish(buf, len, 0);
    int *s = malloc((size_t)n * sizeof(int));
    if (!s)
        return finish(buf, len, 0);
    memcpy(s, ids, (size_t)n * sizeof(int));
    qsort(s, (size_t)n, sizeof(int), cmp_int);
    bool first = true;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && (s[j + 1] == s[j] || s[j + 1] == s[j] + 1))
            j++;
        put_range(buf, len, &pos, s[i], s[j], first);
        first = false;
        i = j + 1;
    }
    free(s);
    return finish(buf, len, pos);
}

static int parse_index(const char **p, int size, long *out)
{
    char *end;
    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (errno || v < 0 || v >= size)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

int nodeset_parse(nodeset_t *ns, const char *text, char *err, size_t errlen)
{
    nodeset_clear_all(ns);
    const char *p = text;
    if (!*p)
        return 0;
    for (;;) {
        const char *item = p;
        long a, b;
        if (parse_index(&p, ns->size, &a) < 0)
            goto bad;
        b = a;
        if (*p == '-') {
            p++;
            if (parse_index(&p, ns->size, &b) < 0 || b < a)
                goto bad;
        }
        for (long i = a; i <= b; i++)
            nodeset_set(ns, (int)i);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            goto bad;
        p++;
        continue;
    bad:
        snprintf(err, errlen, "bad node range at '%.20s' (indices are 0..%d)", item, ns->size - 1);
        return -1;
    }
}
