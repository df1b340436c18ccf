/* Drawing the Gantt chart as SVG.
 *
 * The picture has a fixed size whatever the cluster, so a 10,000-node machine gets
 * rows a few hundredths of a pixel high: the bands still read as areas. Coordinates
 * are rounded to 2 decimals, edges first and sizes from the rounded edges, so that
 * neighbouring rectangles meet exactly and the file stays small and byte-stable. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gantt_internal.h"
#include "svg.h"

/* Layout, in pixels. */
#define W 1200
#define H 700
#define PX 70          /* plot area left */
#define PY 50          /* plot area top */
#define PW 1100        /* plot area width */
#define PH 570         /* plot area height */
#define TOOLTIP_MAX_JOBS 2000
#define TICK_MIN_PX 4  /* a resize of a one-node job on a big cluster still shows */

typedef struct view {
    svg_view_t sv;
    int rows;
} view_t;

static double xpos(const view_t *v, double t) { return svg_x(&v->sv, t); }

static double ypos(const view_t *v, double row) { return svg_round2(PY + row * PH / v->rows); }

/* Golden-ratio hue stepping: consecutive ids land about 222 degrees apart, and
 * integer arithmetic keeps the colour identical on every platform. */
static void job_colour(int64_t id, char buf[32])
{
    uint64_t x = (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15);
    unsigned hue = (unsigned)(((x >> 32) * 360) >> 32);
    static const int light[] = {50, 64, 40};
    snprintf(buf, 32, "hsl(%u,70%%,%d%%)", hue, light[(uint64_t)id % 3]);
}

static void put_rect(const view_t *v, double t0, double t1, int first, int count)
{
    FILE *f = v->sv.f;
    char a[48], b[48], c[48], d[48];
    double x0 = xpos(v, t0), x1 = xpos(v, t1);
    double y0 = ypos(v, first), y1 = ypos(v, (double)first + count);
    fprintf(f, "<rect class=\"j\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"/>\n",
            svg_num(x0, a), svg_num(y0, b), svg_num(x1 - x0, c), svg_num(y1 - y0, d));
}

/* "job 7: 10-250 s, up to 12 nodes": the peak is the largest sum of the runs of one
 * interval, and one interval's runs are consecutive in the list with the same t0. */
static void put_tooltip(const gantt_t *g, const view_t *v, const gjob_t *j, double t_end)
{
    FILE *f = v->sv.f;
    double t0 = NAN, t1 = NAN, cur_t0 = NAN;
    long peak = 0, cur = 0;
    for (int32_t k = j->head; k >= 0; k = g->segs[k].next) {
        const gseg_t *s = &g->segs[k];
        if (isnan(t0))
            t0 = s->t0;
        t1 = s->t1;
        cur = s->t0 == cur_t0 ? cur + s->count : s->count;
        cur_t0 = s->t0;
        peak = cur > peak ? cur : peak;
    }
    if (j->open && t_end > j->t_open) {
        if (isnan(t0))
            t0 = j->t_open;
        t1 = t_end;
        cur = 0;
        for (int i = 0; i < j->nruns; i++)
            cur += j->runs[2 * i + 1];
        peak = cur > peak ? cur : peak;
    }
    char a[64], b[64];
    fprintf(f, "<title>job %" PRId64 ": %s-%s s, up to %ld node%s%s</title>\n", j->id,
            fmt_time(t0, a, sizeof(a)), fmt_time(t1, b, sizeof(b)), peak, peak == 1 ? "" : "s",
            j->open ? ", still running" : "");
}

static int cmp_job(const void *a, const void *b)
{
    const gjob_t *x = *(gjob_t *const *)a, *y = *(gjob_t *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

static int put_jobs(const gantt_t *g, const view_t *v)
{
    FILE *f = v->sv.f;
    gjob_t **order = malloc((g->njobs ? g->njobs : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    if (g->njobs)
        memcpy(order, g->jobs, g->njobs * sizeof(*order));
    qsort(order, g->njobs, sizeof(*order), cmp_job);
    bool tips = g->njobs <= TOOLTIP_MAX_JOBS;
    double t_end = g->tmax; /* jobs still running are drawn to the last event */
    fputs("<g stroke=\"none\">\n", f);
    for (size_t i = 0; i < g->njobs; i++) {
        const gjob_t *j = order[i];
        bool open = j->open && t_end > j->t_open && j->nruns > 0;
        if (j->head < 0 && !open)
            continue;
        char col[32];
        job_colour(j->id, col);
        fprintf(f, "<g fill=\"%s\">\n", col);
        if (tips)
            put_tooltip(g, v, j, t_end);
        for (int32_t k = j->head; k >= 0; k = g->segs[k].next)
            put_rect(v, g->segs[k].t0, g->segs[k].t1, g->segs[k].first, g->segs[k].count);
        for (int r = 0; open && r < j->nruns; r++)
            put_rect(v, j->t_open, t_end, j->runs[2 * r], j->runs[2 * r + 1]);
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
    free(order);
    return 0;
}

/* One path per resize, one vertical stroke per run of rows the job held. */
static void put_ticks(const gantt_t *g, const view_t *v)
{
    FILE *f = v->sv.f;
    fputs("<g stroke=\"#222\" stroke-width=\"1\" fill=\"none\">\n", f);
    for (size_t i = 0; i < g->nticks; i++) {
        const gtick_t *tk = &g->ticks[i];
        if (tk->nruns == 0)
            continue;
        char a[48], b[48], c[48];
        svg_num(xpos(v, tk->t), a);
        fputs("<path class=\"r\" d=\"", f);
        for (int r = 0; r < tk->nruns; r++) {
            const int *run = &g->tickruns[2 * (tk->off + (size_t)r)];
            double y0 = ypos(v, run[0]), y1 = ypos(v, (double)run[0] + run[1]);
            if (y1 - y0 < TICK_MIN_PX) {
                double mid = (y0 + y1) / 2;
                y0 = fmax(PY, mid - TICK_MIN_PX / 2.0);
                y1 = fmin(PY + PH, y0 + TICK_MIN_PX);
            }
            fprintf(f, "M%s %sV%s", a, svg_num(y0, b), svg_num(y1, c));
        }
        fputs("\"/>\n", f);
    }
    fputs("</g>\n", f);
}

static void put_node_axis(const gantt_t *g, const view_t *v)
{
    FILE *f = v->sv.f;
    char a[48];
    fputs("<g text-anchor=\"end\">\n", f);
    if (g->nnodes > 0) {
        int step = (int)lround(svg_nice(fmax(g->nnodes / 10.0, 1)));
        for (int i = 0; i < g->nnodes; i += step) {
            svg_num(ypos(v, i + 0.5), a);
            fprintf(f, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"#000\"/>", PX - 5,
                    a, PX, a);
            fprintf(f, "<text x=\"%d\" y=\"%s\" dy=\"0.35em\">%d</text>\n", PX - 7, a, i);
        }
    }
    fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">"
                  "node (%d in all)</text>\n</g>\n",
            PY + PH / 2, g->nnodes);
}

static void put_legend(const gantt_t *g, const view_t *v)
{
    FILE *f = v->sv.f;
    int y = H - 16;
    char col[32];
    for (int k = 0; k < 3; k++) {
        job_colour(k + 1, col);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                PX + 12 * k, y - 9, col);
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\">one colour per job: its band is the nodes it holds "
            "over time</text>\n",
            PX + 42, y);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>\n", PX + 440,
            y - 10, PX + 440, y + 2);
    fprintf(f, "<text x=\"%d\" y=\"%d\">expand or shrink of the job</text>\n", PX + 448, y);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu jobs, %zu resizes</text>\n",
            PX + PW, y, g->njobs, g->nticks);
}

static int put_svg(const gantt_t *g, FILE *f, const char *title)
{
    view_t v = {.sv = {.f = f, .px = PX, .py = PY, .pw = PW, .ph = PH, .t_lo = g->tmin,
                       .t_hi = g->tmax},
                .rows = g->nnodes > 0 ? g->nnodes : 1};
    if (!(v.sv.t_hi > v.sv.t_lo))
        v.sv.t_hi = v.sv.t_lo + 1;
    svg_begin(f, W, H, title);
    svg_time_axis(&v.sv);
    int rc = put_jobs(g, &v);
    if (rc < 0)
        return rc;
    put_ticks(g, &v);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n",
            PX, PY, PW, PH);
    put_node_axis(g, &v);
    put_legend(g, &v);
    fputs("</svg>\n", f);
    return 0;
}

int gantt_write_svg(const gantt_t *g, const char *path, const char *title, char *err,
                    size_t errlen)
{
    if (!g || !path || !*path) {
        snprintf(err, errlen, "Gantt chart: no %s given", g ? "path" : "chart");
        return -EINVAL;
    }
    if (g->oom) {
        snprintf(err, errlen, "Gantt chart %s: memory ran out while recording allocations",
                 path);
        return -ENOMEM;
    }
    char *iobuf;
    FILE *f = svg_open(path, "Gantt chart", &iobuf, err, errlen);
    if (!f)
        return -errno;
    return svg_close(f, iobuf, put_svg(g, f, title), "Gantt chart", path, err, errlen);
}
