/* The controller's rules for sharing a cluster between users (issue 15): which nodes a
 * job may use (nodesel.c), accounts, fair share, priority and limits (accounts.c),
 * reservations (reservations.c) and partitions (partitions.c). Included by ctld.h,
 * after the types they take. */
#ifndef DUCTILE_CTLD_SHARE_H
#define DUCTILE_CTLD_SHARE_H

/* --- nodesel.c: jobs restricted to some nodes (features, GPUs, memory, lists) --- */
/* The selection a submission asks for (its "features", "gpus_per_node", "mem" (MiB),
 * "req_nodelist", "exc_nodelist" fields, as `show` has them): 0, or -EINVAL with why. */
int nsel_from_request(const json_t *m, job_sel_t *sel, char *err, size_t errlen);
/* Compute the job's allowed and required nodes from its selection and the nodes'
 * attributes: 0, or -EINVAL with a message a user reads ("no node has features
 * gpu&a100"). A node list longer than the job raises its size to it, as in Slurm. */
int nsel_resolve(const ctld_t *c, job_t *j, char *err, size_t errlen);
/* The selection as stored (a JSON object; "" when there is none) and back. */
char *nsel_to_text(const job_sel_t *sel);
int nsel_from_text(const char *text, job_sel_t *sel);
/* Add what it asked for to a job's `show` object. */
void nsel_show(const job_sel_t *sel, json_t *o);
/* Its node sets into the engine's spec; valid until the next call (one buffer). */
void nsel_spec(ctld_t *c, const job_sel_t *sel, sched_jobspec_t *spec);
/* No node at all (a waiting job whose request no node meets after a restart): 0 or
 * -ENOMEM. */
int nsel_no_node(const ctld_t *c, job_sel_t *sel);
/* Copy what a job asked for (an array's next element): 0 or -ENOMEM. */
int nsel_copy_request(const job_sel_t *from, job_sel_t *to);
void nsel_free(job_sel_t *sel);

/* --- accounts.c: accounts, fair share and priority (docs/accounts.md) --- */
/* The tables (made if missing) into memory, and with the saved usage into the engine,
 * with the priority settings of the configuration. At start and after a reload. */
int accounts_load(ctld_t *c, char *err, size_t errlen);
void accounts_free(ctld_t *c);
/* The configuration's priority settings into the engine (start, reconfigure). */
void accounts_engine_settings(ctld_t *c);
/* The account a new job runs under: the one asked for (its user must be a member, an
 * operator need not), else its user's default, else none (unless AccountsRequired). */
/* It also checks the limits of the user and accounts against njobs new jobs (an
 * array's elements): a job no limit would ever let start, or past max_submit. */
int accounts_resolve(ctld_t *c, job_t *j, const char *asked, bool oper, int njobs, char *err,
                     size_t errlen);
/* The --max-submit an operator gave the user (0: none: MaxJobsPerUser applies). */
int accounts_user_max_submit(const ctld_t *c, const char *user);
/* The job's user's limits into the engine, by its uid (a submission, a restore). */
void accounts_job_limits(ctld_t *c, const job_t *j);
/* What holds a waiting job the engine keeps back for a limit, in words ("account
 * physics: at most 8 nodes at once"); NULL when no limit holds it. */
const char *accounts_limit_text(const ctld_t *c, const job_t *j, char *buf, size_t len);
/* An account's id by name; 0: none (a job restored whose account is gone). */
uint32_t accounts_id(const ctld_t *c, const char *name);
/* The engine's fair-share usage into the database: every minute (force: now), in the
 * open batch; not while the disk refuses writes. */
int accounts_save_usage(ctld_t *c, bool force);
/* The wall-clock time the saved usage counts up to (-INFINITY: none saved): a job
 * restored running is charged from there, the controller's downtime included. */
double accounts_usage_until(const ctld_t *c);
/* account_add, account_modify (operators), account_list. */
void accounts_rpc(ctld_t *c, conn_t *conn, json_t *msg, const char *type, bool oper);
/* priority: the waiting jobs' priorities with their weighted factors (sprio). */
void accounts_priority_rpc(ctld_t *c, conn_t *conn, json_t *msg);
/* --- reservations.c: reservations (docs/reservations.md) --- */
/* The table (made if missing) into the engine: at a start and after a reload. */
int resv_load(ctld_t *c, char *err, size_t errlen);
/* The reservation a new job runs in (name: --reservation; NULL: none): its user must be
 * one of its users (an operator need not); none for maintenance. */
int resv_submit(ctld_t *c, job_t *j, const char *name, bool oper, char *err, size_t errlen);
/* A reservation's id by name; 0: none (a restored job whose reservation ended). */
int64_t resv_id_of(ctld_t *c, const char *name);
/* At the tick: ended reservations leave the table. */
void resv_tick(ctld_t *c);
/* reservation_create, reservation_delete (operators), reservation_list. */
void resv_rpc(ctld_t *c, conn_t *conn, json_t *msg, const char *type, bool oper, const char *by);

/* --- partitions.c: partitions (docs/partitions.md) --- */
/* The partitions a new job runs in (asked: "a,b"; NULL: the default one), checked
 * against their rules; sets its time limit from theirs when it gave none, its tier.
 * 0 or -EINVAL with the reason in words. */
int parts_submit(ctld_t *c, job_t *j, const char *asked, bool oper, char *err, size_t errlen);
/* The nodes of its partitions (nnodes flags, the caller frees; NULL: every node) and
 * their highest tier. */
bool *parts_nodes(const ctld_t *c, const job_t *j, int *tier);
/* Every partition of the job is DOWN or INACTIVE: it waits. */
bool parts_down(const ctld_t *c, const job_t *j);
int parts_tier_max(const ctld_t *c);
/* One of its partitions preempts lower tiers (PreemptMode=REQUEUE). */
bool parts_preempt(const ctld_t *c, const job_t *j);
/* The partition a running job runs in (the first of its own that holds all its nodes). */
const char *parts_running_in(const ctld_t *c, const job_t *j);
/* partitions (the list), partition_update (operators: a state, kept across restarts). */
void parts_rpc(ctld_t *c, conn_t *conn, const json_t *m, bool oper);
/* The states operators gave partitions (over ductile.conf's), at start and reload. */
int parts_load(ctld_t *c, char *err, size_t errlen);
/* A listing's partitions ("a,b": queue -p), each checked (without partitions: the
 * cluster's name); 0, or -EINVAL with the reason in words. */
int parts_check_list(const ctld_t *c, const char *list, char *err, size_t errlen);
/* The job is in one of them: a waiting or ended job in one it may run in, a running
 * one in the one it runs in. */
bool parts_job_in(const ctld_t *c, const job_t *j, const char *list);

#endif
