/* The failure trace of `ductile sim --failures FILE` (docs/simulator.md, "Failures"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

int sim_failures_load(const char *path, int nodes, sim_failure_t **out, int *nout, char *err,
                      size_t errlen)
{
    *out = NULL;
    *nout = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno)), -errno;
    sim_failure_t *v = NULL;
    int n = 0, cap = 0, lineno = 0, rc = 0;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line too long (at most %zu characters)", path, lineno,
                     sizeof(line) - 2);
            rc = -EINVAL;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        for (char *p = line; *p; p++)
            if (*p == ',')
                *p = ' ';
        double t, down, nodef;
        char extra;
        int k = sscanf(line, "%lf %lf %lf %c", &t, &nodef, &down, &extra);
        if (k <= 0)
            continue; /* blank or a comment */
        long node = nodef >= -1 && nodef <= 1e9 && nodef == floor(nodef) ? (long)nodef : -2;
        if (k != 3 || !isfinite(t) || t < 0 || !(down > 0) || !isfinite(down) || node == -2) {
            snprintf(err, errlen,
                     "%s:%d: expected TIME NODE DOWN_SECONDS (a time >= 0, a node number, "
                     "a down time > 0)", path, lineno);
            rc = -EINVAL;
            break;
        }
        if (node < 0 || node >= nodes) {
            snprintf(err, errlen, "%s:%d: node %ld is not in the cluster (nodes are 0 to %d)",
                     path, lineno, node, nodes - 1);
            rc = -EINVAL;
            break;
        }
        if (n && t < v[n - 1].t) {
            snprintf(err, errlen, "%s:%d: failures must come in time order (%g after %g)", path,
                     lineno, t, v[n - 1].t);
            rc = -EINVAL;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            sim_failure_t *nv = realloc(v, (size_t)cap * sizeof(*v));
            if (!nv) {
                snprintf(err, errlen, "out of memory");
                rc = -ENOMEM;
                break;
            }
            v = nv;
        }
        v[n++] = (sim_failure_t){.t = t, .node = (int)node, .down = down};
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "error reading %s", path);
        rc = -EIO;
    }
    fclose(f);
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *nout = n;
    return 0;
}
