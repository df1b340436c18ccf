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

/* Layout, in pixels. */
#define W 1200
#define H 700
#define PX 70          /* plot area left */
#define PY 50          /* plot area top */
#define PW 1100        /* plot area width */
#define PH 570         /* plot area height */
#define TOOLTIP_MAX_JOBS 2000
#define TICK_MIN_PX 4  /* a resize of a one-node job on a big cluster still shows */

typedef enum { UNIT_S, UNIT_HMM, UNIT_DAY } tunit_t;

typedef struct view {
    FILE *f;
    double t_lo, t_hi;  /* time axis range */
    int rows;
} view_t;

static double round2(double v) { return round(v * 100.0) / 100.0; }

/* At most 2 decimals, trailing zeros trimmed, never "-0". */
static const char *num(double v, char buf[48])
{
    if (!isfinite(v) || fabs(v) > 1e12)
        v = 0;
    int n = snprintf(buf, 48, "%.2f", v);
    while (n > 0 && buf[n - 1] == '0')
        n--;
    if (n > 0 && buf[n - 1] == '.')
        n--;
    buf[n] = '\0';
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    return buf;
}

static double xpos(const view_t *v, double t)
{
    return round2(PX + (t - v->t_lo) * PW / (v->t_hi - v->t_lo));
}

static double ypos(const view_t *v, double row) { return round2(PY + row * PH / v->rows); }

/* Smallest of 1, 2, 5 x 10^k that is >= raw. */
static double nice(double raw)
{
    double p = pow(10.0, floor(log10(raw)));
    static const double m[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (m[i] * p >= raw * (1 - 1e-9))
            return m[i] * p;
    return 10 * p;
}

/* About ten time ticks. Seconds up to two hours, then h:mm, then whole days. */
static double time_step(double span, tunit_t *unit)
{
    double raw = span / 10;
    if (span <= 7200) {
        *unit = UNIT_S;
        return fmax(nice(raw), 0.001);
    }
    static const double hm[] = {900, 1800, 3600, 7200, 10800, 21600, 43200};
    for (size_t i = 0; i < sizeof(hm) / sizeof(hm[0]); i++)
        if (hm[i] >= raw) {
            *unit = UNIT_HMM;
            return hm[i];
        }
    *unit = UNIT_DAY;
    return fmax(nice(raw / 86400), 1) * 86400;
}

static const char *time_label(double t, tunit_t unit, char buf[64])
{
    if (unit == UNIT_S)
        return fmt_time(t, buf, 64);
    if (unit == UNIT_DAY) {
        char d[48];
        snprintf(buf, 64, "%sd", fmt_time(t / 86400, d, sizeof(d)));
        return buf;
    }
    long long m = llround(fabs(t) / 60);
    snprintf(buf, 64, "%s%lld:%02lld", t < 0 && m ? "-" : "", m / 60, m % 60);
    return buf;
}

/* Golden-ratio hue stepping: consecutive ids land about 222 degrees apart, and
 * integer arithmetic keeps the colour identical on every platform. */
static void job_colour(int64_t id, char buf[32])
{
    uint64_t x = (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15);
    unsigned hue = (unsigned)(((x >> 32) * 360) >> 32);
    static const int light[] = {50, 64, 40};
    snprintf(buf, 32, "hsl(%u,70%%,%d%%)", hue, light[(uint64_t)id % 3]);
}

static void put_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c < 0x20 && c != '\t')
            fputc('?', f); /* not allowed in XML 1.0 */
        else
            fputc(c, f);
    }
}

static void put_rect(const view_t *v, double t0, double t1, int first, int count)
{
    char a[48], b[48], c[48], d[48];
    double x0 = xpos(v, t0), x1 = xpos(v, t1);
    double y0 = ypos(v, first), y1 = ypos(v, (double)first + count);
    fprintf(v->f, "<rect class=\"j\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"/>\n",
            num(x0, a), num(y0, b), num(x1 - x0, c), num(y1 - y0, d));
}

/* "job 7: 10-250 s, up to 12 nodes": the peak is the largest sum of the runs of one
 * interval, and one interval's runs are consecutive in the list with the same t0. */
static void put_tooltip(const gantt_t *g, const view_t *v, const gjob_t *j, double t_end)
{
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
    fprintf(v->f, "<title>job %" PRId64 ": %s-%s s, up to %ld node%s%s</title>\n", j->id,
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
    gjob_t **order = malloc((g->njobs ? g->njobs : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    if (g->njobs)
        memcpy(order, g->jobs, g->njobs * sizeof(*order));
    qsort(order, g->njobs, sizeof(*order), cmp_job);
    bool tips = g->njobs <= TOOLTIP_MAX_JOBS;
    double t_end = g->tmax; /* jobs still running are drawn to the last event */
    fputs("<g stroke=\"none\">\n", v->f);
    for (size_t i = 0; i < g->njobs; i++) {
        const gjob_t *j = order[i];
        bool open = j->open && t_end > j->t_open && j->nruns > 0;
        if (j->head < 0 && !open)
            continue;
        char col[32];
        job_colour(j->id, col);
        fprintf(v->f, "<g fill=\"%s\">\n", col);
        if (tips)
            put_tooltip(g, v, j, t_end);
        for (int32_t k = j->head; k >= 0; k = g->segs[k].next)
            put_rect(v, g->segs[k].t0, g->segs[k].t1, g->segs[k].first, g->segs[k].count);
        for (int r = 0; open && r < j->nruns; r++)
            put_rect(v, j->t_open, t_end, j->runs[2 * r], j->runs[2 * r + 1]);
        fputs("</g>\n", v->f);
    }
    fputs("</g>\n", v->f);
    free(order);
    return 0;
}

/* One path per resize, one vertical stroke per run of rows the job held. */
static void put_ticks(const gantt_t *g, const view_t *v)
{
    fputs("<g stroke=\"#222\" stroke-width=\"1\" fill=\"none\">\n", v->f);
    for (size_t i = 0; i < g->nticks; i++) {
        const gtick_t *tk = &g->ticks[i];
        if (tk->nruns == 0)
            continue;
        char a[48], b[48], c[48];
        num(xpos(v, tk->t), a);
        fputs("<path class=\"r\" d=\"", v->f);
        for (int r = 0; r < tk->nruns; r++) {
            const int *run = &g->tickruns[2 * (tk->off + (size_t)r)];
            double y0 = ypos(v, run[0]), y1 = ypos(v, (double)run[0] + run[1]);
            if (y1 - y0 < TICK_MIN_PX) {
                double mid = (y0 + y1) / 2;
                y0 = fmax(PY, mid - TICK_MIN_PX / 2.0);
                y1 = fmin(PY + PH, y0 + TICK_MIN_PX);
            }
            fprintf(v->f, "M%s %sV%s", a, num(y0, b), num(y1, c));
        }
        fputs("\"/>\n", v->f);
    }
    fputs("</g>\n", v->f);
}

static void put_time_axis(const view_t *v)
{
    tunit_t unit;
    double step = time_step(v->t_hi - v->t_lo, &unit);
    double i0 = ceil(v->t_lo / step - 1e-9), i1 = floor(v->t_hi / step + 1e-9);
    char a[48], lab[64];
    fputs("<g stroke=\"#e3e3e3\">\n", v->f);
    for (double i = i0; i <= i1 && i - i0 < 1000; i++) {
        num(xpos(v, i * step), a);
        fprintf(v->f, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/>\n", a, PY, a, PY + PH);
    }
    fputs("</g>\n<g text-anchor=\"middle\">\n", v->f);
    for (double i = i0; i <= i1 && i - i0 < 1000; i++) {
        num(xpos(v, i * step), a);
        fprintf(v->f, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#000\"/>", a,
                PY + PH, a, PY + PH + 5);
        fprintf(v->f, "<text x=\"%s\" y=\"%d\">%s</text>\n", a, PY + PH + 18,
                time_label(i * step, unit, lab));
    }
    static const char *uname[] = {"s", "h:mm", "days"};
    fprintf(v->f, "<text x=\"%d\" y=\"%d\">time (%s)</text>\n</g>\n", PX + PW / 2,
            PY + PH + 36, uname[unit]);
}

static void put_node_axis(const gantt_t *g, const view_t *v)
{
    char a[48];
    fputs("<g text-anchor=\"end\">\n", v->f);
    if (g->nnodes > 0) {
        int step = (int)lround(nice(fmax(g->nnodes / 10.0, 1)));
        for (int i = 0; i < g->nnodes; i += step) {
            num(ypos(v, i + 0.5), a);
            fprintf(v->f, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"#000\"/>", PX - 5,
                    a, PX, a);
            fprintf(v->f, "<text x=\"%d\" y=\"%s\" dy=\"0.35em\">%d</text>\n", PX - 7, a, i);
        }
    }
    fprintf(v->f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">"
                  "node (%d in all)</text>\n</g>\n",
            PY + PH / 2, g->nnodes);
}

static void put_legend(const gantt_t *g, const view_t *v)
{
    int y = H - 16;
    char col[32];
    for (int k = 0; k < 3; k++) {
        job_colour(k + 1, col);
        fprintf(v->f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                PX + 12 * k, y - 9, col);
    }
    fprintf(v->f,
            "<text x=\"%d\" y=\"%d\">one colour per job: its band is the nodes it holds "
            "over time</text>\n",
            PX + 42, y);
    fprintf(v->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>\n", PX + 440,
            y - 10, PX + 440, y + 2);
    fprintf(v->f, "<text x=\"%d\" y=\"%d\">expand or shrink of the job</text>\n", PX + 448, y);
    fprintf(v->f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu jobs, %zu resizes</text>\n",
            PX + PW, y, g->njobs, g->nticks);
}

static int put_svg(const gantt_t *g, FILE *f, const char *title)
{
    view_t v = {.f = f, .t_lo = g->tmin, .t_hi = g->tmax, .rows = g->nnodes > 0 ? g->nnodes : 1};
    if (!(v.t_hi > v.t_lo))
        v.t_hi = v.t_lo + 1;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", W / 2);
    put_escaped(f, title);
    fputs("</text>\n", f);
    put_time_axis(&v);
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
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "cannot create Gantt chart %s: %s", path, strerror(e));
        return -e;
    }
    static const size_t bufsize = 1 << 18;
    char *iobuf = malloc(bufsize);
    if (iobuf)
        setvbuf(f, iobuf, _IOFBF, bufsize);
    int rc = put_svg(g, f, title);
    int e = rc < 0 ? -rc : 0;
    errno = 0;
    if ((fflush(f) != 0 || ferror(f)) && !e)
        e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    free(iobuf);
    if (e) {
        snprintf(err, errlen, "writing Gantt chart %s: %s", path, strerror(e));
        return -e;
    }
    return 0;
}
