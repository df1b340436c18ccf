#include "evq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static bool less(const evq_item_t *a, const evq_item_t *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->cls != b->cls)
        return a->cls < b->cls;
    return a->seq < b->seq;
}

int evq_push(evq_t *q, double t, int cls, int kind, uint32_t job, uint32_t ver)
{
    if (q->n == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 256;
        evq_item_t *nv = realloc(q->v, ncap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        q->v = nv;
        q->cap = ncap;
    }
    evq_item_t it = {.t = t, .cls = cls, .seq = q->seq++, .job = job, .ver = ver, .kind = kind};
    size_t i = q->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!less(&it, &q->v[p]))
            break;
        q->v[i] = q->v[p];
        i = p;
    }
    q->v[i] = it;
    return 0;
}

const evq_item_t *evq_top(const evq_t *q) { return &q->v[0]; }

void evq_pop(evq_t *q)
{
    evq_item_t last = q->v[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const evq_item_t *best = &last;
        if (l < q->n && less(&q->v[l], best))
            m = l, best = &q->v[l];
        if (r < q->n && less(&q->v[r], best))
            m = r;
        if (m == i)
            break;
        q->v[i] = q->v[m];
        i = m;
    }
    if (q->n)
        q->v[i] = last;
}

void evq_free(evq_t *q)
{
    free(q->v);
    q->v = NULL;
    q->n = q->cap = 0;
}
