/* ductile: the one command users type. Dispatches to a subcommand. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

#define VERSION "0.1.0"

struct subcmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct subcmd subcmds[] = {
    {"submit", cmd_submit, "submit a batch script"},
    {"queue", cmd_queue, "list pending and running jobs"},
    {"show", cmd_show, "show one job in detail, with its resizes"},
    {"cancel", cmd_cancel, "cancel jobs"},
    {"run", cmd_run, "run a command on the nodes of a job (inside a job: its own)"},
    {"mpirun", cmd_mpirun, "start a malleable MPI application (one group per node)"},
    {"rsh", cmd_rsh, "run a command on one node of the job (an MPI launcher's rsh agent)"},
    {"history", cmd_history, "list finished jobs"},
    {"nodes", cmd_nodes, "list nodes and their states"},
    {"drain", cmd_drain, "stop placing jobs on nodes (operators)"},
    {"resume", cmd_resume, "place jobs on drained nodes again (operators)"},
    {"reconfigure", cmd_reconfigure, "make the controller read ductile.conf again (operators)"},
    {"resize", cmd_resize, "expand or shrink a running job"},
    {"power", cmd_power, "the power corridor, the draw and its forecast; change the corridor"},
    {"checkpoints", cmd_checkpoints, "applications' checkpoints: versions, processes, size, variables"},
    {"cluster", cmd_cluster, "start, stop or inspect a local emulated cluster"},
    {"sim", cmd_sim, "replay a workload through the scheduler in simulated time"},
};

int cmd_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ductile: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ductile [--conf FILE] COMMAND [OPTIONS]\n\n"
               "  --conf FILE  the cluster's ductile.conf (default: $DUCTILE_CONF)\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
        fprintf(f, "  %-12s %s\n", subcmds[i].name, subcmds[i].help);
    fprintf(f, "  %-12s %s\n", "version", "print the version");
    fprintf(f, "\n'ductile COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    /* ductile --conf FILE COMMAND ...: as the user guide writes it; the commands take
     * --conf after their name too, and otherwise $DUCTILE_CONF */
    if (argc >= 2 && !strcmp(argv[1], "--conf")) {
        if (argc < 3 || !*argv[2])
            return cmd_fail("--conf needs a file: ductile --conf FILE COMMAND ...") + 1;
        if (setenv("DUCTILE_CONF", argv[2], 1) < 0)
            return cmd_fail("--conf: %s", strerror(errno));
        argv[2] = argv[0];
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        if (argc > 2)
            return cmd_fail("version: unexpected argument '%s'", argv[2]) + 1;
        printf("ductile %s\n", VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
        if (!strcmp(argv[1], subcmds[i].name))
            return subcmds[i].fn(argc - 1, argv + 1);
    cmd_fail("unknown command '%s' (try 'ductile --help')", argv[1]);
    return 2;
}
