/* ductile hostnames [LIST]: a node list expanded, one name a line (as Slurm's `scontrol
 * show hostnames`); without LIST, the job's own ($DUCTILE_JOB_NODELIST, else
 * $SLURM_JOB_NODELIST). No cluster needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "hostlist.h"

int cmd_hostnames(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: ductile hostnames [NODELIST]\n"
               "  prints the nodes of NODELIST (n[01-04,07]), one a line; without it, those\n"
               "  of the job it runs in ($DUCTILE_JOB_NODELIST, else $SLURM_JOB_NODELIST)\n");
        return 0;
    }
    if (argc > 2)
        return cmd_fail("hostnames: one node list at most (quote it if it has blanks)");
    const char *list = argc > 1 ? argv[1] : getenv("DUCTILE_JOB_NODELIST");
    if (!list)
        list = getenv("SLURM_JOB_NODELIST");
    if (!list)
        return cmd_fail("hostnames: no node list given, and not inside a job");
    char **names;
    int n;
    char err[256];
    if (hostlist_expand(list, &names, &n, err, sizeof(err)) < 0)
        return cmd_fail("hostnames: '%s' is not a node list: %s", list, err);
    for (int i = 0; i < n; i++)
        puts(names[i]);
    hostlist_free(names, n);
    return 0;
}
