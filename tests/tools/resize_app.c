/* A malleable application for the tests of operator resizes (process layer only):
 *
 *   resize_app commit|decline|inhibit|silent STOPFILE
 *
 * It attaches as the job's leader and, until STOPFILE exists, answers every offer:
 * commit (takes it at once: it has no processes on other nodes), decline, or none at
 * all because it declines offers in advance (dt_set_inhibit). silent: it asks to
 * survive a node's loss (dt_set_survive_loss) and never answers an offer. Each offer
 * and answer is printed, one line each. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ductile.h"

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "commit") && strcmp(argv[1], "decline") &&
                      strcmp(argv[1], "inhibit") && strcmp(argv[1], "silent"))) {
        fprintf(stderr, "usage: resize_app commit|decline|inhibit|silent STOPFILE\n");
        return 2;
    }
    const char *mode = argv[1], *stop = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    int arc = dt_attach(1);
    if (arc < 0) { /* (with the errno's name: tests check the code) */
        fprintf(stderr, "resize_app: dt_attach: %s (%s)\n", dt_strerror(), strerror(-arc));
        return 1;
    }
    if (!strcmp(mode, "inhibit") && dt_set_inhibit(1) < 0) {
        fprintf(stderr, "resize_app: dt_set_inhibit: %s\n", dt_strerror());
        return 1;
    }
    if (!strcmp(mode, "silent") && dt_set_survive_loss(1) < 0) {
        fprintf(stderr, "resize_app: dt_set_survive_loss: %s\n", dt_strerror());
        return 1;
    }
    printf("attached (%s)\n", mode);
    while (access(stop, F_OK) != 0) {
        dt_offer_t o;
        int rc = dt_wait_offer(&o, 0.1);
        if (rc < 0) {
            fprintf(stderr, "resize_app: dt_wait_offer: %s\n", dt_strerror());
            return 1;
        }
        if (rc == 0 || o.op == DT_WITHDRAWN)
            continue;
        printf("offer %ld %s %d -> %d\n", o.id,
               o.op == DT_EXPAND ? "expand" : o.op == DT_LOST ? "lost" : "shrink",
               o.before, o.after);
        if (!strcmp(mode, "silent"))
            continue;
        rc = !strcmp(mode, "commit") ? dt_offer_commit(&o) : dt_offer_decline(&o);
        printf("%s %ld: %s\n", !strcmp(mode, "commit") ? "commit" : "decline", o.id,
               rc < 0 ? dt_strerror() : "ok");
    }
    dt_detach();
    return 0;
}
