/* The `ductile` command: one entry per subcommand. */
#ifndef DUCTILE_CMD_H
#define DUCTILE_CMD_H

int cmd_sim(int argc, char **argv);
int cmd_submit(int argc, char **argv);
/* ductile alloc's submission: script instead of a file, the options alone (up to
 * *first, the command's words), the job's id in *id; the exit status. */
int cmd_submit_alloc(int argc, char **argv, const char *script, long long *id, int *first);
int cmd_alloc(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_reconfigure(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_resize(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_rsh(int argc, char **argv);
/* slurmcompat.c: run as sbatch, squeue, scancel, scontrol, sinfo, sacct, srun or salloc
 * (the basename the program was started under); -1 for any other name */
int slurm_compat(const char *prog, int argc, char **argv);
/* what `submit` prints before the job's id ("Submitted job"; sbatch's words for it) */
extern const char *cmd_submit_banner;
/* how queue's errors name its --format and --sort (squeue's -o, -O and -S under squeue) */
extern const char *cmd_queue_format_opt, *cmd_queue_sort_opt;
int cmd_hold(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_requeue(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_hostnames(int argc, char **argv);
int cmd_mpirun(int argc, char **argv);
int cmd_power(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_account(int argc, char **argv);
int cmd_priority(int argc, char **argv);
int cmd_partitions(int argc, char **argv);
int cmd_reservation(int argc, char **argv);
/* A time as --begin takes it (HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], now+N[unit], midnight,
 * noon, tomorrow): 0 and *out seconds since the epoch, or -1. */
int cmd_parse_begin(const char *v, double *out);

/* $DUCTILE_JOB_ID, 0 outside a job. */
long long cmd_job_from_env(void);
/* `ductile run [-N NODES] [--node NODE] WORDS...` inside job: one task per node of the
 * first NODES (0: all), or on NODE only; returns the largest exit status. */
int cmd_run_words(long long job, long nodes, const char *node, char **words, int nwords);

/* Prints "ductile: <message>" on stderr; returns the exit code to use (1). */
int cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
