/* ductile: the one command users type. Dispatches to a subcommand.
 *
 * Every `ductile submit` is a process of its own, and its start-up is most of what it
 * costs: each shared library is opened, mapped and relocated before main. The commands
 * that run the scheduling engine in this process (sim, and cluster, which checks the
 * policy with it) bring GLPK and its six libraries with it; they live in ductile-engine
 * beside this binary, and `ductile sim|cluster` runs it in its place (exec: the same
 * process, arguments, environment and exit status). The others link neither. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

#define VERSION "0.1.0"

struct subcmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

/* fn NULL: ductile-engine's */
static const struct subcmd subcmds[] = {
    {"submit", cmd_submit, "submit a batch script"},
    {"queue", cmd_queue, "list pending and running jobs"},
    {"show", cmd_show, "show one job in detail, with its resizes"},
    {"cancel", cmd_cancel, "cancel jobs"},
    {"hold", cmd_hold, "keep pending jobs from starting"},
    {"release", cmd_release, "let held jobs start again"},
    {"requeue", cmd_requeue, "end running jobs and queue them again"},
    {"alloc", cmd_alloc, "wait for nodes, then run a shell or command with them (salloc)"},
    {"update", cmd_update, "change a job's time limit, name or size"},
    {"run", cmd_run, "run a command on the nodes of a job (inside a job: its own)"},
    {"mpirun", cmd_mpirun, "start a malleable MPI application (one group per node)"},
    {"rsh", cmd_rsh, "run a command on one node of the job (an MPI launcher's rsh agent)"},
    {"history", cmd_history, "list finished jobs"},
    {"priority", cmd_priority, "the waiting jobs' priorities and their factors (sprio)"},
    {"partitions", cmd_partitions, "the partitions: their nodes, states and rules"},
    {"reservation", cmd_reservation, "nodes set apart for a time: create, list, delete (operators)"},
    {"account", cmd_account, "accounts and their fair share; add or change them (operators)"},
    {"nodes", cmd_nodes, "list nodes and their states"},
    {"drain", cmd_drain, "stop placing jobs on nodes (operators)"},
    {"resume", cmd_resume, "place jobs on drained nodes again (operators)"},
    {"reconfigure", cmd_reconfigure, "make the controller read ductile.conf again (operators)"},
    {"resize", cmd_resize, "expand or shrink a running job"},
    {"power", cmd_power, "the power corridor, the draw and its forecast; change the corridor"},
    {"hostnames", cmd_hostnames, "expand a node list, one name a line (scontrol show hostnames)"},
    {"checkpoints", cmd_checkpoints, "applications' checkpoints: versions, processes, size, variables"},
    {"cluster", NULL, "start, stop or inspect a local emulated cluster"},
    {"sim", NULL, "replay a workload through the scheduler in simulated time"},
};

/* argv[0] becomes ductile-engine, from this binary's directory; returns only on failure. */
static int run_engine(char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0)
        return cmd_fail("%s: cannot find this program's directory: %s", argv[1], strerror(errno));
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(path, sizeof(path), "%.*s/ductile-engine", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    argv[0] = path;
    execv(path, argv);
    return cmd_fail("%s: cannot run %s (installed with ductile, beside it): %s", argv[1], path,
                    strerror(errno));
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
    /* started as sbatch, squeue...: Slurm's commands (slurmcompat.c) */
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int compat = slurm_compat(prog, argc, argv);
    if (compat >= 0)
        return compat;
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
    bool json = false; /* errors as JSON too (cu_exit) */
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        json = json || !strcmp(argv[i], "--json");
    for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
        if (!strcmp(argv[1], subcmds[i].name))
            return cu_exit(subcmds[i].fn ? subcmds[i].fn(argc - 1, argv + 1) : run_engine(argv),
                           json);
    cmd_fail("unknown command '%s' (try 'ductile --help')", argv[1]);
    return 2;
}
