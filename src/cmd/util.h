/* Helpers shared by the ductile subcommands that talk to a cluster. */
#ifndef DUCTILE_CMD_UTIL_H
#define DUCTILE_CMD_UTIL_H

#include <jansson.h>
#include <stdbool.h>

#include "client.h"
#include "config.h"

/* The configuration named by --conf or DUCTILE_CONF; exits with a message if none. */
int cu_load_conf(const char *conf, config_t *cfg);
/* One request, one reply; prints the error and returns NULL on failure. */
/* A connection to the controller: through our node's daemon inside a job, else its
 * local socket, else TCP with MUNGE (a login host). */
int cu_open(const config_t *cfg, client_t **c, char *err, size_t errlen);
json_t *cu_call(const config_t *cfg, json_t *req);
/* The code of the last refused or failed call (errors.h; PROTO_E_NONE: none) and its
 * words. */
extern proto_err_t cu_err_code;
extern char cu_err_words[1024];
/* A command's exit status: rc, or the code's (proto_err_exit) when a call failed; with
 * json, {"error", "code"} on stdout too. */
int cu_exit(int rc, bool json);
/* A request on many jobs (cancel, hold, release, requeue) the controller answers in
 * parts: while the reply names the jobs it left (`rest`), sends them again by id (the
 * filters had chosen them), and joins the parts' `results`. req is consumed. */
json_t *cu_call_parts(const config_t *cfg, json_t *req);
/* A listing the controller answers a page at a time (queue, history): asks for the next
 * page (the reply's "next" as "after") until none is left or limit items came (0: no
 * limit; the request's "limit" is lowered as they come), through call (cu_call, or a
 * quieter one). The pages' "jobs" are joined, and their "text"; req is consumed. */
json_t *cu_paged(json_t *(*call)(const config_t *cfg, json_t *req), const config_t *cfg,
                 json_t *req, long limit);
/* cu_call with the configuration named by conf (--conf) or DUCTILE_CONF. */
json_t *cu_request(const char *conf, json_t *req);
/* A submission's idempotency key: $DUCTILE_SUBMIT_KEY if set (checked), else 32
 * random hex digits; one per `ductile submit` invocation. 0, or 1 once told. */
int cu_submit_key(char *key, size_t len);
/* This command's file-creation mask: a job or a step it starts gets it (as sbatch
 * records it at submission, and srun's tasks inherit it). */
int cu_umask(void);
/* Seconds on the monotonic clock (for deadlines). */
double cu_mono(void);
/* A retry's pause: sleeps *pause seconds, then doubles it, up to max. */
void cu_backoff(double *pause, double max);
/* cu_call for a request that is safe to repeat (a submission with its key): on a
 * broken connection, a refused one (the controller restarting) or a timeout, tries
 * again with backoff until $DUCTILE_SUBMIT_RETRY_SECONDS (default 60) have passed;
 * one attempt waits at most $DUCTILE_SUBMIT_ATTEMPT_SECONDS (default 20) for its reply. */
json_t *cu_call_retry(const config_t *cfg, json_t *req);
/* "12:34" style durations: [D-]HH:MM:SS, MM:SS. */
void cu_fmt_duration(double secs, char *buf, size_t len);
/* A wall-clock time as the commands print it: 2026-11-26T14:05:00, local time. */
void cu_fmt_time(double t, char *buf, size_t len);
/* Joules as users read them: "0 J", "850 J", "12.3 kJ", "4.56 MJ" (with kWh beyond). */
void cu_fmt_energy(double joules, char *buf, size_t len);
/* A signal by name (USR1, SIGUSR1, any case) or number (1 to 64); 0 if it is none. */
int cu_signal_number(const char *s);
/* Prints rows as aligned columns under hdr (NULL: no header line); every row has ncols
 * strings. */
void cu_table(const char *const *hdr, char ***rows, int nrows, int ncols);
/* Frees such rows (each row's strings, the rows, the array). */
void cu_free_rows(char ***rows, int nrows, int ncols);
/* A common --conf / --json option scan: returns the index of the first other arg. */
void cu_print_json(const json_t *v);
const char *cu_str(const json_t *o, const char *key);
/* A job id (1 or more); nonzero once the error is printed. */
int cu_parse_job(const char *s, long long *id);
/* A job as the user names it: its id, or "12_3" for element 3 of array 12 (which the
 * controller finds); NULL once the error is printed. */
json_t *cu_job_ref(const char *s);
/* A time limit as --time takes it (Slurm's formats, Ductile's 90s/30m/2h/1d,
 * UNLIMITED): 0 and *out seconds (0: none), or -1. */
int cu_parse_limit(const char *arg, double *out);
#define CU_LIMIT_FORMATS "minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], UNLIMITED, or 90s, 30m, 2h, 1d; at most 100 years"
/* A formatted string the caller frees; NULL if out of memory. */
char *cu_sprintf(const char *f, ...) __attribute__((format(printf, 1, 2)));
double cu_num(const json_t *o, const char *key);

#endif
