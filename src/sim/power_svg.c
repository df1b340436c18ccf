/* The power chart: the cluster's draw over time as a step line, the corridor as a
 * shaded band between its two bounds (step lines that change when the corridor does),
 * and the periods with the draw outside the corridor in red.
 *
 * The draw between two samples is the first one's (the simulator samples after every
 * change), so sample k holds over [t_k, t_k+1); the last sample only ends the chart.
 * Samples at one instant keep the last: the draw once the instant's changes are done. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "svg.h"

/* Layout, in pixels: the Gantt chart's, so that the two line up. */
#define W 1200
#define H 700
#define PX 70
#define PY 50
#define PW 1100
#define PH 570
#define EPS 1e-9
#define MIN_OUT_PX 2

typedef struct sample {
    double t, w, lo, up;
    bool busy;          /* jobs queued or running: only then is a draw outside */
} sample_t;

struct power_chart {
    char *path;
    FILE *f;
    char *iobuf;
    sample_t *s;
    size_t n, cap;
    bool oom;
};

typedef struct view {
    svg_view_t sv;
    double w_top;       /* W at the top of the plot */
} view_t;

power_chart_t *power_chart_open(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf(err, errlen, "power chart: no path given");
        return NULL;
    }
    power_chart_t *c = calloc(1, sizeof(*c));
    if (!c || !(c->path = strdup(path))) {
        snprintf(err, errlen, "power chart %s: out of memory", path);
        free(c);
        return NULL;
    }
    if (!(c->f = svg_open(path, "power chart", &c->iobuf, err, errlen))) {
        free(c->path);
        free(c);
        return NULL;
    }
    return c;
}

void power_chart_add(power_chart_t *c, double t, double watts, double lower, double upper,
                     bool busy)
{
    if (!c || !isfinite(t) || !isfinite(watts) || (c->n && t < c->s[c->n - 1].t))
        return;
    if (c->n && t == c->s[c->n - 1].t) {
        c->s[c->n - 1] = (sample_t){t, watts, lower, upper, busy};
        return;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 256;
        sample_t *p = realloc(c->s, nc * sizeof(*p));
        if (!p) {
            c->oom = true;
            return;
        }
        c->s = p;
        c->cap = nc;
    }
    c->s[c->n++] = (sample_t){t, watts, lower, upper, busy};
}

static double ypos(const view_t *v, double w)
{
    if (!(w < v->w_top))
        w = v->w_top; /* an upper bound of +inf: the top of the plot */
    return svg_round2(PY + PH - w * PH / v->w_top);
}

/* As the simulator counts it: an idle cluster after the last job is not outside. */
static bool outside(const sample_t *s)
{
    return s->busy && (s->w > s->up + EPS || s->w < s->lo - EPS);
}

typedef enum { DRAW, LOWER, UPPER } line_t;

static double value(const sample_t *s, line_t which)
{
    return which == DRAW ? s->w : which == LOWER ? s->lo : s->up;
}

/* A step line through one value per sample, merging equal neighbours: "M x y" then
 * "H x V y" at every change, to the right end of the plot. */
static void put_steps(const power_chart_t *c, const view_t *v, line_t which, const char *cls)
{
    FILE *f = v->sv.f;
    char a[48], b[48];
    double prev = NAN;
    fprintf(f, "<path class=\"%s\" d=\"", cls);
    for (size_t k = 0; k < c->n; k++) {
        double val = value(&c->s[k], which);
        if (k > 0 && val == prev)
            continue;
        double x = svg_x(&v->sv, c->s[k].t), y = ypos(v, val);
        if (k == 0)
            fprintf(f, "M%s %s", svg_num(x, a), svg_num(y, b));
        else
            fprintf(f, "H%sV%s", svg_num(x, a), svg_num(y, b));
        prev = val;
    }
    fprintf(f, "H%s\"/>\n", svg_num(svg_x(&v->sv, v->sv.t_hi), a));
}

/* The next sample after k with other bounds (n: none). */
static size_t phase_end(const power_chart_t *c, size_t k)
{
    size_t e = k + 1;
    while (e < c->n && c->s[e].lo == c->s[k].lo && c->s[e].up == c->s[k].up)
        e++;
    return e;
}

static double phase_x1(const power_chart_t *c, const view_t *v, size_t e)
{
    return svg_x(&v->sv, e < c->n ? c->s[e].t : v->sv.t_hi);
}

/* The band between the bounds: along the upper one, back along the lower one, one
 * stretch per corridor in force. */
static void put_band(const power_chart_t *c, const view_t *v)
{
    FILE *f = v->sv.f;
    char a[48], b[48], d[48];
    fputs("<path class=\"corridor\" fill=\"#2ca02c\" fill-opacity=\"0.18\" stroke=\"none\" d=\"",
          f);
    size_t starts = 0;
    for (size_t k = 0; k < c->n; k = phase_end(c, k), starts++)
        fprintf(f, "%s%s %sH%s", k ? "L" : "M", svg_num(svg_x(&v->sv, c->s[k].t), a),
                svg_num(ypos(v, c->s[k].up), b), svg_num(phase_x1(c, v, phase_end(c, k)), d));
    /* back: the phases again, last first */
    for (size_t i = starts; i-- > 0;) {
        size_t k = 0;
        for (size_t j = 0; j < i; j++)
            k = phase_end(c, k);
        fprintf(f, "L%s %sH%s", svg_num(phase_x1(c, v, phase_end(c, k)), a),
                svg_num(ypos(v, c->s[k].lo), b), svg_num(svg_x(&v->sv, c->s[k].t), d));
    }
    fputs("Z\"/>\n", f);
}

/* A light red column over every run of samples outside the corridor, with a tooltip
 * (at least MIN_OUT_PX wide, so that a short one still shows). Returns the runs. */
static size_t put_outside(const power_chart_t *c, const view_t *v)
{
    FILE *f = v->sv.f;
    char a[48], b[48], t0[64], t1[64];
    size_t runs = 0;
    fputs("<g fill=\"#d62728\" fill-opacity=\"0.15\" stroke=\"none\">\n", f);
    for (size_t k = 0; k + 1 < c->n; k++) {
        if (!outside(&c->s[k]))
            continue;
        size_t e = k + 1;
        while (e + 1 < c->n && outside(&c->s[e]))
            e++;
        double x0 = svg_x(&v->sv, c->s[k].t), x1 = svg_x(&v->sv, c->s[e].t);
        if (x1 - x0 < MIN_OUT_PX)
            x0 = fmax(PX, fmin(x0, PX + PW - MIN_OUT_PX)), x1 = x0 + MIN_OUT_PX;
        fprintf(f, "<rect class=\"out\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\">",
                svg_num(x0, a), PY, svg_num(x1 - x0, b), PH);
        fprintf(f, "<title>outside the corridor: %s-%s s</title></rect>\n",
                fmt_time(c->s[k].t, t0, sizeof(t0)), fmt_time(c->s[e].t, t1, sizeof(t1)));
        runs++;
        k = e - 1;
    }
    fputs("</g>\n", f);
    return runs;
}

/* The draw itself in red where it is outside, over the black line. */
static void put_outside_draw(const power_chart_t *c, const view_t *v)
{
    FILE *f = v->sv.f;
    char a[48], b[48], d[48];
    fputs("<path class=\"drawout\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"3\" d=\"",
          f);
    for (size_t k = 0; k + 1 < c->n; k++)
        if (outside(&c->s[k]))
            fprintf(f, "M%s %sH%s", svg_num(svg_x(&v->sv, c->s[k].t), a),
                    svg_num(ypos(v, c->s[k].w), b), svg_num(svg_x(&v->sv, c->s[k + 1].t), d));
    fputs("\"/>\n", f);
}

static void put_watts_axis(const view_t *v)
{
    FILE *f = v->sv.f;
    double step = svg_nice(v->w_top / 8);
    char a[48];
    fputs("<g stroke=\"#e3e3e3\">\n", f);
    for (double w = step; w <= v->w_top * (1 + EPS); w += step) {
        svg_num(ypos(v, w), a);
        fprintf(f, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>\n", PX, a, PX + PW, a);
    }
    fputs("</g>\n<g text-anchor=\"end\">\n", f);
    for (double w = 0; w <= v->w_top * (1 + EPS); w += step) {
        svg_num(ypos(v, w), a);
        fprintf(f, "<line x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"#000\"/>", PX - 5, a,
                PX, a);
        fprintf(f, "<text x=\"%d\" y=\"%s\" dy=\"0.35em\">%.0f</text>\n", PX - 7, a, w);
    }
    fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">"
               "cluster power draw (W)</text>\n</g>\n",
            PY + PH / 2);
}

static void put_legend(const power_chart_t *c, const view_t *v, size_t runs)
{
    FILE *f = v->sv.f;
    int y = H - 16;
    size_t changes = 0;
    for (size_t k = 1; k < c->n; k++)
        changes += c->s[k].w != c->s[k - 1].w;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" "
               "stroke-width=\"1.5\"/>\n",
            PX, y - 4, PX + 20, y - 4);
    fprintf(f, "<text x=\"%d\" y=\"%d\">draw</text>\n", PX + 26, y);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"10\" fill=\"#2ca02c\" "
               "fill-opacity=\"0.3\" stroke=\"#2ca02c\"/>\n",
            PX + 80, y - 9);
    fprintf(f, "<text x=\"%d\" y=\"%d\">corridor (lower to upper bound)</text>\n", PX + 106, y);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"10\" fill=\"#d62728\" "
               "fill-opacity=\"0.4\"/>\n",
            PX + 320, y - 9);
    fprintf(f, "<text x=\"%d\" y=\"%d\">outside the corridor</text>\n", PX + 346, y);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu change%s of the draw, %zu "
               "period%s outside the corridor</text>\n",
            PX + PW, y, changes, changes == 1 ? "" : "s", runs, runs == 1 ? "" : "s");
}

static void put_svg(const power_chart_t *c, const char *title)
{
    view_t v = {.sv = {.f = c->f, .px = PX, .py = PY, .pw = PW, .ph = PH}};
    double top = 0;
    bool corridor = false;
    for (size_t k = 0; k < c->n; k++) {
        const sample_t *s = &c->s[k];
        top = fmax(top, fmax(s->w, s->lo));
        if (isfinite(s->up))
            top = fmax(top, s->up);
        corridor |= s->lo > 0 || isfinite(s->up);
    }
    double step = svg_nice(fmax(top * 1.05, 1) / 8);
    v.w_top = ceil(fmax(top * 1.05, 1) / step) * step;
    v.sv.t_lo = c->n ? c->s[0].t : 0;
    v.sv.t_hi = c->n ? c->s[c->n - 1].t : 1;
    if (!(v.sv.t_hi > v.sv.t_lo))
        v.sv.t_hi = v.sv.t_lo + 1;
    svg_begin(c->f, W, H, title);
    svg_time_axis(&v.sv);
    put_watts_axis(&v);
    if (corridor && c->n) {
        put_band(c, &v);
        fputs("<g fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"1.5\" "
              "stroke-dasharray=\"6 3\">\n",
              c->f);
        put_steps(c, &v, UPPER, "upper");
        put_steps(c, &v, LOWER, "lower");
        fputs("</g>\n", c->f);
    }
    size_t runs = c->n ? put_outside(c, &v) : 0;
    if (c->n) {
        fputs("<g fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\">\n", c->f);
        put_steps(c, &v, DRAW, "draw");
        fputs("</g>\n", c->f);
        put_outside_draw(c, &v);
    }
    fprintf(c->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                  "stroke=\"#000\"/>\n",
            PX, PY, PW, PH);
    put_legend(c, &v, runs);
    fputs("</svg>\n", c->f);
}

int power_chart_close(power_chart_t *c, const char *title, char *err, size_t errlen)
{
    if (!c)
        return 0;
    int rc = c->oom ? -ENOMEM : 0;
    if (!c->oom)
        put_svg(c, title);
    rc = svg_close(c->f, c->iobuf, rc, "power chart", c->path, err, errlen);
    free(c->s);
    free(c->path);
    free(c);
    return rc;
}
