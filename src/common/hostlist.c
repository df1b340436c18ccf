#include "hostlist.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers in ranges are limited to 18 digits so that they and their counts fit in
 * an unsigned long long without overflow checks on every step. */
#define NUM_DIGITS_MAX 18

typedef unsigned long long ull;

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool hostlist_valid_name(const char *s)
{
    size_t n = 0;
    if (!s)
        return false;
    for (; s[n]; n++)
        if (!name_char(s[n]) || n >= HOSTLIST_NAME_MAX)
            return false;
    return n > 0;
}

/* Copies at most 60 bytes of s[0..n) for quoting in a message, with "..." when
 * clipped and '?' for bytes that would garble a terminal or a log line. */
static const char *clip(const char *s, size_t n, char out[72])
{
    size_t k = n > 60 ? 60 : n;
    for (size_t i = 0; i < k; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    strcpy(out + k, n > k ? "..." : "");
    return out;
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- the index ---------------------------------------------------------------- */

struct hostlist_index {
    char *const *names;
    int *slot; /* position in names, or -1 */
    size_t mask;
};

static uint64_t hash_name(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h ^ (h >> 29);
}

int hostlist_index_create(char *const *names, int count, hostlist_index_t **out, int *dup)
{
    *out = NULL;
    if (count < 0 || (count > 0 && !names))
        return -EINVAL;
    hostlist_index_t *ix = calloc(1, sizeof(*ix));
    size_t cap = 16;
    while (cap < 2 * (size_t)count) /* at most half full: short probe runs */
        cap <<= 1;
    if (!ix || !(ix->slot = malloc(cap * sizeof(int)))) {
        free(ix);
        return -ENOMEM;
    }
    memset(ix->slot, 0xff, cap * sizeof(int));
    ix->names = names;
    ix->mask = cap - 1;
    for (int i = 0; i < count; i++) {
        size_t h = hash_name(names[i]) & ix->mask;
        while (ix->slot[h] >= 0) {
            if (strcmp(names[ix->slot[h]], names[i]) == 0) {
                if (dup)
                    *dup = i;
                hostlist_index_destroy(ix);
                return -EEXIST;
            }
            h = (h + 1) & ix->mask;
        }
        ix->slot[h] = i;
    }
    *out = ix;
    return 0;
}

void hostlist_index_destroy(hostlist_index_t *ix)
{
    if (!ix)
        return;
    free(ix->slot);
    free(ix);
}

int hostlist_index_find(const hostlist_index_t *ix, const char *name)
{
    if (!ix || !name)
        return -1;
    size_t h = hash_name(name) & ix->mask;
    while (ix->slot[h] >= 0) {
        if (strcmp(ix->names[ix->slot[h]], name) == 0)
            return ix->slot[h];
        h = (h + 1) & ix->mask;
    }
    return -1;
}

/* ---- expansion ---------------------------------------------------------------- */

typedef struct range {
    ull lo, hi;
    int width; /* digits the lower bound was written with: the zero padding */
} range_t;

/* An item is lit0 [group0] lit1 [group1] ... litN: segment k holds lit k and, except
 * for the last, the ranges of group k. */
typedef struct seg {
    const char *lit;
    size_t litlen;
    int r0, nr; /* ranges r[r0 .. r0+nr) of the item */
} seg_t;

typedef struct item {
    const char *text; /* the whole item, for messages */
    size_t len;
    seg_t *seg;
    int nseg, segcap;
    range_t *r;
    int nr, rcap;
} item_t;

/* arr (of *cap elements of size sz) enlarged to hold at least need; NULL (arr left
 * as it was) when memory runs out. */
static void *grow(void *arr, int *cap, int need, size_t sz)
{
    if (need <= *cap)
        return arr;
    int nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *p = realloc(arr, (size_t)nc * sz);
    if (p)
        *cap = nc;
    return p;
}

static int add_seg(item_t *it, const char *lit, size_t litlen)
{
    seg_t *sg = grow(it->seg, &it->segcap, it->nseg + 1, sizeof(seg_t));
    if (!sg)
        return -ENOMEM;
    it->seg = sg;
    it->seg[it->nseg++] = (seg_t){.lit = lit, .litlen = litlen, .r0 = it->nr, .nr = 0};
    return 0;
}

/* Reads a number of 1..NUM_DIGITS_MAX digits at s[*p]. */
static int read_num(const char *s, size_t len, size_t *p, ull *v, int *ndig)
{
    size_t start = *p;
    ull x = 0;
    while (*p < len && is_digit(s[*p])) {
        if (*p - start >= NUM_DIGITS_MAX)
            return -1;
        x = x * 10 + (ull)(s[*p] - '0');
        (*p)++;
    }
    if (*p == start)
        return -1;
    *v = x;
    *ndig = (int)(*p - start);
    return 0;
}

/* Parses the bracket group that starts after the '[' at s[*p]. */
static int parse_group(item_t *it, size_t *p, char *err, size_t errlen)
{
    const char *s = it->text;
    size_t len = it->len;
    char q1[72], q2[72];
    for (;;) {
        size_t el = *p, elend = el;
        while (elend < len && s[elend] != ',' && s[elend] != ']')
            elend++;
        range_t r;
        int nd;
        bool ok = read_num(s, len, p, &r.lo, &r.width) == 0;
        r.hi = r.lo;
        if (ok && *p < len && s[*p] == '-') {
            (*p)++;
            ok = read_num(s, len, p, &r.hi, &nd) == 0;
        }
        if (elend == el) {
            errf(err, errlen, "%s in '%s'", el < len ? "empty range" : "missing ']'",
                 clip(s, len, q2));
            return -EINVAL;
        }
        if (!ok || *p != elend) {
                errf(err, errlen, "bad range '%s' in '%s' (expected N or N-M, at most %d digits)",
                     clip(s + el, elend - el, q1), clip(s, len, q2), NUM_DIGITS_MAX);
            return -EINVAL;
        }
        if (r.hi < r.lo) {
            errf(err, errlen, "bad range '%s' in '%s' (the upper bound is below the lower)",
                 clip(s + el, elend - el, q1), clip(s, len, q2));
            return -EINVAL;
        }
        range_t *rs = grow(it->r, &it->rcap, it->nr + 1, sizeof(range_t));
        if (!rs)
            return -ENOMEM;
        it->r = rs;
        it->r[it->nr++] = r;
        it->seg[it->nseg - 1].nr++;
        if (*p >= len) {
            errf(err, errlen, "missing ']' in '%s'", clip(s, len, q2));
            return -EINVAL;
        }
        if (s[(*p)++] == ']')
            return 0;
    }
}

static int parse_item(item_t *it, char *err, size_t errlen)
{
    const char *s = it->text;
    size_t len = it->len, p = 0, lit = 0;
    char q[72];
    int rc;
    while (p < len) {
        char c = s[p];
        if (c == '[') {
            if ((rc = add_seg(it, s + lit, p - lit)) < 0)
                return rc;
            p++;
            if ((rc = parse_group(it, &p, err, errlen)) < 0)
                return rc;
            lit = p;
        } else if (name_char(c)) {
            p++;
        } else {
            const char *what = c == ']' ? "unexpected ']'"
                               : is_blank(c) ? "blank" : "bad character";
            errf(err, errlen, "%s in '%s' (host names use letters, digits, '-', '_', '.')",
                 what, clip(s, len, q));
            return -EINVAL;
        }
    }
    return add_seg(it, s + lit, p - lit);
}

/* Names the item expands to, saturated at HOSTLIST_MAX_HOSTS + 1. */
static ull item_count(const item_t *it)
{
    const ull cap = (ull)HOSTLIST_MAX_HOSTS + 1;
    ull total = 1;
    for (int k = 0; k + 1 < it->nseg; k++) {
        ull n = 0;
        for (int i = 0; i < it->seg[k].nr && n < cap; i++) {
            const range_t *r = &it->r[it->seg[k].r0 + i];
            n += r->hi - r->lo + 1; /* < 10^18 each: no overflow before the cap test */
        }
        total = n >= cap ? cap : total * n;
        if (total >= cap)
            return cap;
    }
    return total;
}

/* Appends the names of a parsed item to names[*count ..]; the caller made room. */
static int generate(const item_t *it, char **names, int *count, char *err, size_t errlen)
{
    int ng = it->nseg - 1;
    int *ri = calloc((size_t)ng + 1, sizeof(int)); /* current range of each group */
    ull *v = calloc((size_t)ng + 1, sizeof(ull));  /* current value of each group */
    int rc = 0;
    if (!ri || !v) {
        rc = -ENOMEM;
        goto out;
    }
    for (int g = 0; g < ng; g++)
        v[g] = it->r[it->seg[g].r0].lo;
    for (;;) {
        char name[HOSTLIST_NAME_MAX + 1];
        size_t pos = 0;
        bool toolong = false;
        for (int k = 0; k < it->nseg && !toolong; k++) {
            const seg_t *sg = &it->seg[k];
            char num[32] = "";
            int nn = 0;
            if (k < ng)
                nn = snprintf(num, sizeof(num), "%0*llu", it->r[sg->r0 + ri[k]].width, v[k]);
            if (pos + sg->litlen + (size_t)nn > HOSTLIST_NAME_MAX) {
                toolong = true;
                break;
            }
            memcpy(name + pos, sg->lit, sg->litlen);
            memcpy(name + pos + sg->litlen, num, (size_t)nn);
            pos += sg->litlen + (size_t)nn;
        }
        if (toolong || pos == 0) {
            char q[72];
            errf(err, errlen, "%s in '%s' (names are 1..%d characters)",
                 toolong ? "host name too long" : "empty host name", clip(it->text, it->len, q),
                 HOSTLIST_NAME_MAX);
            rc = -EINVAL;
            goto out;
        }
        name[pos] = '\0';
        if (!(names[*count] = strdup(name))) {
            rc = -ENOMEM;
            goto out;
        }
        (*count)++;
        /* Odometer: the last group turns fastest, as in Slurm. */
        int g = ng - 1;
        for (; g >= 0; g--) {
            const seg_t *sg = &it->seg[g];
            const range_t *r = &it->r[sg->r0 + ri[g]];
            if (v[g] < r->hi) {
                v[g]++;
                break;
            }
            if (ri[g] + 1 < sg->nr) {
                v[g] = it->r[sg->r0 + ++ri[g]].lo;
                break;
            }
            ri[g] = 0;
            v[g] = it->r[sg->r0].lo;
        }
        if (g < 0)
            break;
    }
out:
    free(ri);
    free(v);
    return rc;
}

void hostlist_free(char **names, int count)
{
    if (!names)
        return;
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* One top-level item: up to the next comma outside brackets, blanks trimmed. */
static const char *next_item(const char *p, size_t *len, const char **next)
{
    while (is_blank(*p))
        p++;
    const char *e = p;
    int depth = 0;
    for (; *e && !(*e == ',' && depth == 0); e++) {
        if (*e == '[')
            depth++;
        else if (*e == ']' && depth > 0)
            depth--;
    }
    *next = *e ? e + 1 : NULL;
    while (e > p && is_blank(e[-1]))
        e--;
    *len = (size_t)(e - p);
    return p;
}

int hostlist_expand(const char *text, char ***names_out, int *count_out, char *err, size_t errlen)
{
    char **names = NULL;
    int count = 0, cap = 0, rc = 0;
    item_t it = {0};
    char q[72];
    *names_out = NULL;
    *count_out = 0;
    if (!text) {
        errf(err, errlen, "no host list");
        return -EINVAL;
    }
    const char *p = text;
    while (is_blank(*p))
        p++;
    if (!*p)
        return 0;
    for (const char *next = p; next;) {
        size_t len;
        const char *s = next_item(next, &len, &next);
        if (len == 0) {
            errf(err, errlen, "empty item in host list '%s'", clip(text, strlen(text), q));
            rc = -EINVAL;
            goto fail;
        }
        it.text = s;
        it.len = len;
        it.nseg = it.nr = 0;
        if ((rc = parse_item(&it, err, errlen)) < 0)
            goto fail;
        ull n = item_count(&it);
        if (n > (ull)(HOSTLIST_MAX_HOSTS - count)) {
            errf(err, errlen, "too many hosts in '%s' (at most %d in a list)",
                 clip(text, strlen(text), q), HOSTLIST_MAX_HOSTS);
            rc = -E2BIG;
            goto fail;
        }
        char **nn = grow(names, &cap, count + (int)n, sizeof(char *));
        if (!nn) {
            rc = -ENOMEM;
            goto fail;
        }
        names = nn;
        if ((rc = generate(&it, names, &count, err, errlen)) < 0)
            goto fail;
    }
    hostlist_index_t *ix;
    int dup = -1;
    if ((rc = hostlist_index_create(names, count, &ix, &dup)) < 0) {
        if (rc == -EEXIST) {
            char q2[72];
            errf(err, errlen, "duplicate host '%s' in '%s'", names[dup],
                 clip(text, strlen(text), q2));
            rc = -EINVAL;
        }
        goto fail;
    }
    hostlist_index_destroy(ix);
    free(it.seg);
    free(it.r);
    *names_out = names;
    *count_out = count;
    return 0;
fail:
    if (rc == -ENOMEM)
        errf(err, errlen, "out of memory expanding a host list");
    free(it.seg);
    free(it.r);
    hostlist_free(names, count);
    return rc;
}

/* ---- compression -------------------------------------------------------------- */

/* A name as prefix, number, suffix, split at its last run of digits. */
typedef struct split {
    const char *s;
    size_t plen, dlen; /* prefix length, digits of the number */
    ull v;
    bool num; /* false: no digits, or too many to be a range bound */
} split_t;

static void split_name(const char *s, split_t *o)
{
    size_t n = strlen(s), e = n;
    *o = (split_t){.s = s};
    while (e > 0 && !is_digit(s[e - 1]))
        e--;
    if (e == 0)
        return;
    size_t b = e;
    while (b > 0 && is_digit(s[b - 1]))
        b--;
    if (e - b > NUM_DIGITS_MAX)
        return;
    o->plen = b;
    o->dlen = e - b;
    o->num = true;
    for (size_t i = b; i < e; i++)
        o->v = o->v * 10 + (ull)(s[i] - '0');
}

static bool same_group(const split_t *a, const split_t *b)
{
    return a->num && b->num && a->plen == b->plen && memcmp(a->s, b->s, a->plen) == 0 &&
           strcmp(a->s + a->plen + a->dlen, b->s + b->plen + b->dlen) == 0;
}

static int ndigits(ull v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* b continues a range whose lower bound is written with w digits and whose last
 * value is a: expansion would print b's number exactly as b has it. */
static bool continues(const split_t *a, const split_t *b, size_t w)
{
    size_t need = (size_t)ndigits(b->v) > w ? (size_t)ndigits(b->v) : w;
    return b->v == a->v + 1 && b->dlen == need;
}

typedef struct out {
    char *buf;
    size_t len, pos;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, o->pos++)
        if (o->pos + 1 < o->len)
            o->buf[o->pos] = s[i];
}

int hostlist_compress(char *const *names, int count, char *buf, size_t len)
{
    out_t o = {.buf = buf, .len = len};
    if (count < 0 || (count > 0 && !names))
        return -EINVAL;
    for (int i = 0; i < count; i++)
        if (!hostlist_valid_name(names[i]))
            return -EINVAL;
    split_t a = {0}, b = {0};
    int i = 0;
    if (count > 0)
        split_name(names[0], &a);
    while (i < count) {
        /* Group: the maximal run of names from i with a's prefix and suffix. */
        int j = i + 1;
        if (j < count)
            split_name(names[j], &b);
        if (i > 0)
            put(&o, ",", 1);
        if (j >= count || !same_group(&a, &b)) {
            put(&o, names[i], strlen(names[i]));
            a = b;
            i = j;
            continue;
        }
        put(&o, a.s, a.plen);
        put(&o, "[", 1);
        const char *suffix = a.s + a.plen + a.dlen;
        bool first = true;
        for (;;) {
            /* One range starting at a. */
            split_t lo = a, last = a;
            while (j < count && same_group(&lo, &b) && continues(&last, &b, lo.dlen)) {
                last = b;
                if (++j < count)
                    split_name(names[j], &b);
            }
            if (!first)
                put(&o, ",", 1);
            first = false;
            put(&o, lo.s + lo.plen, lo.dlen);
            if (last.s != lo.s) {
                put(&o, "-", 1);
                put(&o, last.s + last.plen, last.dlen);
            }
            if (j >= count || !same_group(&lo, &b))
                break;
            a = b;
            if (++j < count)
                split_name(names[j], &b);
        }
        put(&o, "]", 1);
        put(&o, suffix, strlen(suffix));
        a = b;
        i = j;
    }
    if (len)
        buf[o.pos < len ? o.pos : len - 1] = '\0';
    return o.pos > (size_t)INT32_MAX ? -EOVERFLOW : (int)o.pos;
}
