/* What the simulator's SVG charts share (gantt_svg.c, power_svg.c): numbers written
 * the same way in every file, escaping, the frame, the time axis, and the file's
 * opening and closing with errors in the user's words. Not part of the simulator API. */
#ifndef DUCTILE_SIM_SVG_H
#define DUCTILE_SIM_SVG_H

#include <stddef.h>
#include <stdio.h>

/* A plot: its area in pixels and the time range across it. */
typedef struct svg_view {
    FILE *f;
    int px, py, pw, ph;     /* plot area: left, top, width, height */
    double t_lo, t_hi;      /* time axis range */
} svg_view_t;

double svg_round2(double v);

/* At most 2 decimals, trailing zeros trimmed, never "-0". Returns buf. */
const char *svg_num(double v, char buf[48]);

/* Smallest of 1, 2, 5 x 10^k that is >= raw. */
double svg_nice(double raw);

/* The text of s with the characters XML reserves escaped. */
void svg_escaped(FILE *f, const char *s);

/* x of time t in the plot, rounded to 2 decimals. */
double svg_x(const svg_view_t *v, double t);

/* <svg ...>, a white background and the title centred on top. */
void svg_begin(FILE *f, int w, int h, const char *title);

/* Vertical grid lines, ticks and labels at about ten round times (seconds up to two
 * hours, then h:mm, then days), and "time (unit)" below. */
void svg_time_axis(const svg_view_t *v);

/* Opens path for a chart named what ("Gantt chart"); NULL with err set. *iobuf is a
 * buffer for the stream, freed by svg_close. */
FILE *svg_open(const char *path, const char *what, char **iobuf, char *err, size_t errlen);

/* Closes f; rc < 0 is an error met while drawing. 0, or -errno with err set. */
int svg_close(FILE *f, char *iobuf, int rc, const char *what, const char *path, char *err,
              size_t errlen);

#endif
