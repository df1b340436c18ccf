/* ductile-engine: the `ductile` commands that run the scheduling engine in their own
 * process (sim; cluster, which checks the policy with it), apart so that the others
 * start without GLPK and its libraries (ductile.c). `ductile sim|cluster ...` execs
 * this with the same arguments: argv[1] is the command. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sim"))
        return cmd_sim(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "cluster"))
        return cmd_cluster(argc - 1, argv + 1);
    fprintf(stderr, "usage: ductile-engine sim|cluster ... (what `ductile sim` and `ductile "
                    "cluster` run)\n");
    return 2;
}
