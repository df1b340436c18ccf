/* offer_app: a malleable job's leader on the process layer of libductile, for tests.
 *
 *   offer_app LOG [--limits MIN MAX PREF] [--interval S] [--decline | --stall | --fail WHY]
 *             [--until FILE]
 *
 * Attaches, tells the controller its limits / offer interval, then answers offers until
 * FILE exists: commits each (the process layer needs nothing more for a test); with
 * --decline declines each; with --stall accepts and never commits (an application stuck
 * in its adaptation); with --fail accepts, then reports the adaptation failed. Every offer is appended to LOG as
 * "offer ID expand|shrink|withdrawn BEFORE AFTER committed|declined|-". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ductile.h"

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: offer_app LOG [--limits MIN MAX PREF] [--interval S] "
                        "[--decline | --stall | --fail WHY] [--until FILE]\n");
        return 2;
    }
    const char *log = argv[1], *until = NULL, *failwhy = NULL;
    int stall = 0, decline = 0, lim = 0, lo = 0, hi = 0, pref = 0;
    double interval = -1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--limits") && i + 3 < argc) {
            lim = 1;
            lo = atoi(argv[++i]);
            hi = atoi(argv[++i]);
            pref = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
            interval = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--decline")) {
            decline = 1;
        } else if (!strcmp(argv[i], "--stall")) {
            stall = 1;
        } else if (!strcmp(argv[i], "--fail") && i + 1 < argc) {
            failwhy = argv[++i];
        } else if (!strcmp(argv[i], "--until") && i + 1 < argc) {
            until = argv[++i];
        } else {
            fprintf(stderr, "offer_app: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    /* limits before the attach: they go with it, before any offer */
    if ((lim && dt_set_size_limits(lo, hi, pref) < 0) ||
        (interval >= 0 && dt_set_offer_interval(interval) < 0) || dt_attach(1) < 0) {
        fprintf(stderr, "offer_app: %s\n", dt_strerror());
        return 1;
    }
    while (!until || access(until, F_OK) != 0) {
        dt_offer_t o;
        int rc = dt_wait_offer(&o, 0.1);
        if (rc < 0) {
            fprintf(stderr, "offer_app: %s\n", dt_strerror());
            return 1;
        }
        if (rc == 0)
            continue;
        const char *what = "-";
        if (o.op != DT_WITHDRAWN && (stall || failwhy)) {
            rc = dt_offer_accept(&o);
            if (rc == 0 && failwhy)
                rc = dt_resize_failed(&o, failwhy);
            what = rc < 0 ? dt_strerror() : stall ? "stalled" : "failed";
        } else if (o.op != DT_WITHDRAWN) {
            rc = decline ? dt_offer_decline(&o) : dt_offer_commit(&o);
            what = rc < 0 ? dt_strerror() : decline ? "declined" : "committed";
        }
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "offer %ld %s %d %d %s\n", o.id,
                    o.op == DT_EXPAND ? "expand" : o.op == DT_SHRINK ? "shrink" : "withdrawn",
                    o.before, o.after, what);
            fclose(f);
        }
    }
    dt_detach();
    return 0;
}
