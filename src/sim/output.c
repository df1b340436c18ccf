/* Time formatting shared by every simulator output, and the events CSV.
 *
 * Every time goes through fmt_time so that two runs of the same workload produce
 * byte-identical files: a fixed number of decimals, then the noise trimmed. */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nodeset.h"

char *fmt_time(double t, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    if (!isfinite(t)) {
        snprintf(buf, len, "%s", isnan(t) ? "nan" : t < 0 ? "-inf" : "inf");
        return buf;
    }
    /* %.3f of the largest double needs 309 digits plus ".000"; format in full first
     * so trimming never works on a truncated number. */
    char tmp[400];
    int n = snprintf(tmp, sizeof(tmp), "%.3f", t);
    while (n > 0 && tmp[n - 1] == '0')
        n--;
    if (n > 0 && tmp[n - 1] == '.')
        n--;
    tmp[n] = '\0';
    /* -0.0 and tiny negatives that round to zero print as "-0". */
    const char *s = strcmp(tmp, "-0") == 0 ? "0" : tmp;
    snprintf(buf, len, "%s", s);
    return buf;
}

const char *sim_op_name(sim_op_t op)
{
    switch (op) {
    case SIM_OP_START:
        return "start";
    case SIM_OP_EXPAND:
        return "expand";
    case SIM_OP_SHRINK:
        return "shrink";
    case SIM_OP_END:
        return "end";
    case SIM_OP_FAIL:
        return "fail";
    case SIM_OP_INTERRUPT:
        return "interrupt";
    }
    return "unknown";
}

/* The CSV gets millions of rows: one large stdio buffer, no flush per row. */
#define CSV_BUFSIZE (1 << 20)

struct events_csv {
    FILE *f;
    char *iobuf;
    char *list;      /* scratch for the node list of the current row */
    size_t listcap;
    int err;         /* first errno seen; add() cannot report, close() does */
    char path[];
};

events_csv_t *events_csv_open(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf(err, errlen, "events CSV: no path given");
        return NULL;
    }
    size_t plen = strlen(path) + 1;
    events_csv_t *w = calloc(1, sizeof(*w) + plen);
    if (!w) {
        snprintf(err, errlen, "events CSV %s: out of memory", path);
        return NULL;
    }
    memcpy(w->path, path, plen);
    w->iobuf = malloc(CSV_BUFSIZE);
    w->listcap = 256;
    w->list = malloc(w->listcap);
    if (!w->iobuf || !w->list) {
        snprintf(err, errlen, "events CSV %s: out of memory", path);
        goto fail;
    }
    w->f = fopen(path, "w");
    if (!w->f) {
        snprintf(err, errlen, "cannot create events CSV %s: %s", path, strerror(errno));
        goto fail;
    }
    setvbuf(w->f, w->iobuf, _IOFBF, CSV_BUFSIZE);
    if (fputs("time,job,op,nodes_before,nodes_after,node_list\n", w->f) == EOF)
        w->err = errno ? errno : EIO;
    return w;
fail:
    free(w->iobuf);
    free(w->list);
    free(w);
    return NULL;
}

/* Fills w->list with the range form of the nodes; 0 or -ENOMEM. */
static int format_list(events_csv_t *w, const int *nodes, int n)
{
    size_t need = nodeset_format_ids(nodes, n, w->list, w->listcap);
    if (need < w->listcap)
        return 0;
    char *nl = realloc(w->list, need + 1);
    if (!nl)
        return -ENOMEM;
    w->list = nl;
    w->listcap = need + 1;
    nodeset_format_ids(nodes, n, w->list, w->listcap);
    return 0;
}

void events_csv_add(events_csv_t *w, const sim_alloc_event_t *ev)
{
    if (!w || !ev || w->err)
        return;
    w->list[0] = '\0';
    if (!sim_op_ends(ev->op) && ev->nodes && ev->n > 0 && format_list(w, ev->nodes, ev->n)) {
        w->err = ENOMEM;
        return;
    }
    char tbuf[64];
    /* RFC 4180: a field holding a comma is quoted; range lists never hold quotes. */
    const char *q = strchr(w->list, ',') ? "\"" : "";
    if (fprintf(w->f, "%s,%" PRId64 ",%s,%d,%d,%s%s%s\n", fmt_time(ev->t, tbuf, sizeof(tbuf)),
                ev->job, sim_op_name(ev->op), ev->before, ev->after, q, w->list, q) < 0)
        w->err = errno ? errno : EIO;
}

int events_csv_close(events_csv_t *w, char *err, size_t errlen)
{
    if (!w)
        return 0;
    int e = w->err;
    /* A full disk often shows only when the buffer is flushed, so flush here where
     * errno still says why. */
    errno = 0;
    if ((fflush(w->f) != 0 || ferror(w->f)) && !e)
        e = errno ? errno : EIO;
    if (fclose(w->f) != 0 && !e)
        e = errno ? errno : EIO;
    int rc = 0;
    if (e) {
        snprintf(err, errlen, "writing events CSV %s: %s", w->path, strerror(e));
        rc = -e;
    }
    free(w->iobuf);
    free(w->list);
    free(w);
    return rc;
}
