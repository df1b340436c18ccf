/* What the simulator's SVG charts share. Coordinates are rounded to 2 decimals and
 * every number goes through svg_num, so that two runs write byte-identical files. */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

typedef enum { UNIT_S, UNIT_HMM, UNIT_DAY } tunit_t;

double svg_round2(double v) { return round(v * 100.0) / 100.0; }

const char *svg_num(double v, char buf[48])
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

double svg_nice(double raw)
{
    double p = pow(10.0, floor(log10(raw)));
    static const double m[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (m[i] * p >= raw * (1 - 1e-9))
            return m[i] * p;
    return 10 * p;
}

void svg_escaped(FILE *f, const char *s)
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

double svg_x(const svg_view_t *v, double t)
{
    return svg_round2(v->px + (t - v->t_lo) * v->pw / (v->t_hi - v->t_lo));
}

void svg_begin(FILE *f, int w, int h, const char *title)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            w, h, w, h);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
    fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", w / 2);
    svg_escaped(f, title);
    fputs("</text>\n", f);
}

/* About ten time ticks. Seconds up to two hours, then h:mm, then whole days. */
static double time_step(double span, tunit_t *unit)
{
    double raw = span / 10;
    if (span <= 7200) {
        *unit = UNIT_S;
        return fmax(svg_nice(raw), 0.001);
    }
    static const double hm[] = {900, 1800, 3600, 7200, 10800, 21600, 43200};
    for (size_t i = 0; i < sizeof(hm) / sizeof(hm[0]); i++)
        if (hm[i] >= raw) {
            *unit = UNIT_HMM;
            return hm[i];
        }
    *unit = UNIT_DAY;
    return fmax(svg_nice(raw / 86400), 1) * 86400;
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

void svg_time_axis(const svg_view_t *v)
{
    tunit_t unit;
    double step = time_step(v->t_hi - v->t_lo, &unit);
    double i0 = ceil(v->t_lo / step - 1e-9), i1 = floor(v->t_hi / step + 1e-9);
    int bottom = v->py + v->ph;
    char a[48], lab[64];
    fputs("<g stroke=\"#e3e3e3\">\n", v->f);
    for (double i = i0; i <= i1 && i - i0 < 1000; i++) {
        svg_num(svg_x(v, i * step), a);
        fprintf(v->f, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/>\n", a, v->py, a, bottom);
    }
    fputs("</g>\n<g text-anchor=\"middle\">\n", v->f);
    for (double i = i0; i <= i1 && i - i0 < 1000; i++) {
        svg_num(svg_x(v, i * step), a);
        fprintf(v->f, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#000\"/>", a,
                bottom, a, bottom + 5);
        fprintf(v->f, "<text x=\"%s\" y=\"%d\">%s</text>\n", a, bottom + 18,
                time_label(i * step, unit, lab));
    }
    static const char *uname[] = {"s", "h:mm", "days"};
    fprintf(v->f, "<text x=\"%d\" y=\"%d\">time (%s)</text>\n</g>\n", v->px + v->pw / 2,
            bottom + 36, uname[unit]);
}

FILE *svg_open(const char *path, const char *what, char **iobuf, char *err, size_t errlen)
{
    *iobuf = NULL;
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s %s: %s", what, path, strerror(e));
        errno = e;
        return NULL;
    }
    static const size_t bufsize = 1 << 18;
    *iobuf = malloc(bufsize);
    if (*iobuf)
        setvbuf(f, *iobuf, _IOFBF, bufsize);
    return f;
}

int svg_close(FILE *f, char *iobuf, int rc, const char *what, const char *path, char *err,
              size_t errlen)
{
    int e = rc < 0 ? -rc : 0;
    errno = 0;
    if ((fflush(f) != 0 || ferror(f)) && !e)
        e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    free(iobuf);
    if (e) {
        snprintf(err, errlen, "writing %s %s: %s", what, path, strerror(e));
        return -e;
    }
    return 0;
}
