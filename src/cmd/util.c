#define _GNU_SOURCE /* vasprintf */
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "rng.h"
#include "strparse.h"

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

char *cu_sprintf(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

int cu_load_conf(const char *conf, config_t *cfg)
{
    if (!conf)
        conf = getenv("DUCTILE_CONF");
    if (!conf || !*conf)
        return cmd_fail("no cluster: give --conf FILE or set DUCTILE_CONF "
                        "(ductile cluster up starts a local one)");
    char err[1024];
    if (config_load(conf, cfg, err, sizeof(err)) < 0)
        return cmd_fail("%s", err);
    return 0;
}

int cu_open(const config_t *cfg, client_t **c, char *err, size_t errlen)
{
    /* Inside a job: through the daemon of our node, which relays to the controller
     * (docs/architecture.md, "Job-side traffic"); a compute host has no controller
     * socket and holds no user credentials. */
    const char *noded = getenv("DUCTILE_NODED_SOCKET");
    if (noded && *noded && client_open_unix(noded, c, err, errlen) == 0)
        return 0;
    int rc = client_open_unix(cfg->control_socket, c, err, errlen);
    if (rc == -ENOENT && cfg->auth_type != CONFIG_AUTH_MUNGE) {
        /* a login or compute host: no controller socket, and no TCP without MUNGE */
        size_t n = strlen(err);
        snprintf(err + n, errlen - n,
                 " (is this the controller's host, and is ductiled running? With AuthType = "
                 "key, commands work only there and inside jobs; other hosts need AuthType "
                 "= munge)");
        return rc;
    }
    if (rc < 0 && cfg->auth_type == CONFIG_AUTH_MUNGE) {
        rc = client_open_tcp(cfg->control_addr, cfg->control_port, NULL, cfg->munge_socket, c,
                             err, errlen);
        if (rc == -EACCES && !strncmp(err, "munge: ", 7)) {
            /* munged is missing or elsewhere on this host: say where we looked */
            char why[256];
            snprintf(why, sizeof(why), "%s", err + 7);
            const char *sock = cfg->munge_socket && *cfg->munge_socket
                                   ? cfg->munge_socket
                                   : "libmunge's default socket";
            snprintf(err, errlen,
                     "no MUNGE credential from munged at %s: %s (is munged running on this "
                     "host, and is MungeSocket its socket?)",
                     sock, why);
        }
    }
    return rc;
}

/* How long a request the controller answered "try later" (nothing done: code
 * try_later) is tried again. */
#define TRY_LATER_SECONDS 30.0

proto_err_t cu_err_code;
char cu_err_words[1024];

/* A call that failed: its words on stderr, its code kept for the exit status (cu_exit) */
static void call_failed(int rc, const char *err)
{
    proto_err_t e = proto_err_of_errno(rc);
    cu_err_code = e != PROTO_E_NONE ? e : PROTO_E_UNREACHABLE; /* the connection's errno */
    snprintf(cu_err_words, sizeof(cu_err_words), "%s", err);
    cmd_fail("%s", err);
}

int cu_exit(int rc, bool json)
{
    if (rc == 0 || cu_err_code == PROTO_E_NONE)
        return rc;
    if (json) { /* a program reading --json gets the refusal there too */
        json_t *o = json_pack("{s:s,s:s}", "error", cu_err_words, "code",
                              proto_err_name(cu_err_code));
        if (o)
            cu_print_json(o);
        json_decref(o);
    }
    return proto_err_exit(cu_err_code);
}

json_t *cu_call(const config_t *cfg, json_t *req)
{
    char err[1024];
    json_t *reply = NULL;
    double deadline = cu_mono() + TRY_LATER_SECONDS, pause = 0.1;
    bool told = false;
    for (;;) {
        client_t *c = NULL;
        int rc = cu_open(cfg, &c, err, sizeof(err));
        if (rc == 0)
            rc = client_call(c, req, &reply, 60, err, sizeof(err));
        client_close(c);
        if (rc == -EBUSY && cu_mono() + pause < deadline) {
            if (!told)
                fprintf(stderr, "ductile: %s; trying again for up to %.0f s\n", err,
                        TRY_LATER_SECONDS);
            told = true;
            cu_backoff(&pause, 0.8);
            continue;
        }
        json_decref(req);
        if (rc < 0) {
            call_failed(rc, err);
            return NULL;
        }
        return reply;
    }
}

json_t *cu_call_parts(const config_t *cfg, json_t *req)
{
    json_t *rep = cu_call(cfg, json_deep_copy(req));
    while (rep && json_is_array(json_object_get(rep, "rest"))) {
        json_object_set(req, "jobs", json_object_get(rep, "rest"));
        static const char *const filters[] = {"user", "me", "state", "name"};
        for (size_t k = 0; k < sizeof(filters) / sizeof(filters[0]); k++)
            json_object_del(req, filters[k]);
        json_t *more = cu_call(cfg, json_deep_copy(req));
        if (!more) {
            json_decref(rep);
            rep = NULL;
            break;
        }
        json_array_extend(json_object_get(rep, "results"), json_object_get(more, "results"));
        json_object_del(rep, "rest");
        if (json_object_get(more, "rest"))
            json_object_set(rep, "rest", json_object_get(more, "rest"));
        json_decref(more);
    }
    json_decref(req);
    return rep;
}

json_t *cu_paged(json_t *(*call)(const config_t *cfg, json_t *req), const config_t *cfg,
                 json_t *req, long limit)
{
    json_t *rep = call(cfg, json_deep_copy(req));
    json_t *jobs = rep ? json_object_get(rep, "jobs") : NULL;
    while (rep && json_object_get(rep, "next") &&
           (!limit || !jobs || (long)json_array_size(jobs) < limit)) {
        json_object_set(req, "after", json_object_get(rep, "next"));
        if (limit && jobs)
            json_object_set_new(req, "limit", json_integer(limit - (long)json_array_size(jobs)));
        json_t *more = call(cfg, json_deep_copy(req));
        if (!more) {
            json_decref(rep);
            rep = NULL;
            break;
        }
        if (jobs)
            json_array_extend(jobs, json_object_get(more, "jobs"));
        const char *t = json_string_value(json_object_get(rep, "text"));
        const char *u = json_string_value(json_object_get(more, "text"));
        if (t && u) {
            size_t a = json_string_length(json_object_get(rep, "text"));
            size_t b = json_string_length(json_object_get(more, "text"));
            char *both = malloc(a + b + 1);
            if (both) {
                memcpy(both, t, a);
                memcpy(both + a, u, b);
                json_object_set_new(rep, "text", json_stringn(both, a + b));
            }
            free(both);
        }
        json_object_del(rep, "next");
        if (json_object_get(more, "next")) /* none after the last */
            json_object_set(rep, "next", json_object_get(more, "next"));
        json_decref(more);
    }
    json_decref(req);
    return rep;
}

int cu_umask(void)
{
    mode_t m = umask(0); /* the only way to read it; put back at once */
    umask(m);
    return (int)(m & 0777);
}

int cu_submit_key(char *key, size_t len)
{
    const char *k = getenv("DUCTILE_SUBMIT_KEY");
    if (k) {
        size_t n = strlen(k);
        if (n < 1 || n > 64 || n >= len ||
            strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
            return cmd_fail("DUCTILE_SUBMIT_KEY must be 1 to 64 letters, digits, '.', '_' or '-'");
        memcpy(key, k, n + 1);
        return 0;
    }
    int rc = rng_secret_hex(key, len, 16);
    if (rc < 0)
        return cmd_fail("cannot make a submission key: %s", strerror(-rc));
    return 0;
}

double cu_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cu_backoff(double *pause, double max)
{
    struct timespec ts = {(time_t)*pause, (long)((*pause - (double)(time_t)*pause) * 1e9)};
    nanosleep(&ts, NULL);
    *pause = *pause * 2 > max ? max : *pause * 2;
}

json_t *cu_call_retry(const config_t *cfg, json_t *req)
{
    /* 60 s in all, as a single call waited before; an attempt waits at most 20 s for
     * its reply (a group commit takes milliseconds, seconds on a slow disk), so a
     * controller that stopped answering is tried again through a new connection */
    double limit = 60;
    const char *e = getenv("DUCTILE_SUBMIT_RETRY_SECONDS");
    long v;
    if (e && strparse_long(e, 0, 86400, &v) == 0)
        limit = (double)v;
    double attempt = 20;
    e = getenv("DUCTILE_SUBMIT_ATTEMPT_SECONDS");
    if (e && strparse_long(e, 1, 3600, &v) == 0)
        attempt = (double)v;
    /* a test hook: the first attempt sends its request and hangs up without reading
     * the reply, as a client whose connection broke after the controller committed */
    const char *drop = getenv("DUCTILE_TEST_DROP_REPLY");
    bool dropped = !(drop && !strcmp(drop, "1"));
    double deadline = cu_mono() + limit, pause = 0.1;
    bool told = false;
    char err[1024];
    for (;;) {
        client_t *c = NULL;
        json_t *reply = NULL;
        int rc = cu_open(cfg, &c, err, sizeof(err));
        if (rc == 0 && !dropped) {
            dropped = true;
            rc = client_send(c, req, err, sizeof(err));
            if (rc == 0) {
                rc = -ECONNRESET;
                snprintf(err, sizeof(err), "the connection was closed (test: reply dropped)");
            }
        } else if (rc == 0) {
            double left = deadline - cu_mono();
            rc = client_call(c, req, &reply, left > attempt ? attempt : left < 1 ? 1 : left,
                             err, sizeof(err));
        }
        client_close(c);
        if (rc == 0) {
            json_decref(req);
            return reply;
        }
        if (!client_retryable(rc) || cu_mono() + pause > deadline) {
            json_decref(req);
            call_failed(rc, err);
            return NULL;
        }
        if (!told)
            fprintf(stderr, "ductile: %s; trying again for up to %.0f s (the submission has a "
                            "key: it makes one job at most)\n", err, limit);
        told = true;
        cu_backoff(&pause, 2);
    }
}

void cu_fmt_duration(double secs, char *buf, size_t len)
{
    long s = secs > 0 ? (long)floor(secs + 0.5) : 0;
    long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, x = s % 60;
    if (d)
        snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", d, h, m, x);
    else if (h)
        snprintf(buf, len, "%ld:%02ld:%02ld", h, m, x);
    else
        snprintf(buf, len, "%ld:%02ld", m, x);
}

void cu_free_rows(char ***rows, int nrows, int ncols)
{
    for (int r = 0; rows && r < nrows; r++) {
        for (int c = 0; c < ncols; c++)
            free(rows[r][c]);
        free(rows[r]);
    }
    free(rows);
}

void cu_table(const char *const *hdr, char ***rows, int nrows, int ncols)
{
    int w[16] = {0};
    for (int c = 0; c < ncols && c < 16; c++) {
        w[c] = hdr ? (int)strlen(hdr[c]) : 0;
        for (int r = 0; r < nrows; r++)
            if ((int)strlen(rows[r][c]) > w[c])
                w[c] = (int)strlen(rows[r][c]);
    }
    for (int c = 0; c < ncols && hdr; c++) {
        if (c + 1 < ncols)
            printf("%-*s  ", w[c], hdr[c]);
        else
            printf("%s\n", hdr[c]);
    }
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < ncols; c++) {
            if (c + 1 < ncols)
                printf("%-*s  ", w[c], rows[r][c]);
            else
                printf("%s\n", rows[r][c]);
        }
}

void cu_print_json(const json_t *v)
{
    json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', stdout);
}

const char *cu_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double cu_num(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

void cu_fmt_energy(double j, char *buf, size_t len)
{
    if (!(j > 0))
        snprintf(buf, len, "0 J");
    else if (j < 1e3)
        snprintf(buf, len, "%.0f J", j);
    else if (j < 1e6)
        snprintf(buf, len, "%.1f kJ", j / 1e3);
    else
        snprintf(buf, len, "%.2f MJ (%.2f kWh)", j / 1e6, j / 3.6e6);
}

json_t *cu_request(const char *conf, json_t *req)
{
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg)) {
        json_decref(req);
        return NULL;
    }
    json_t *rep = cu_call(&cfg, req);
    config_free(&cfg);
    return rep;
}

void cu_fmt_time(double t, char *buf, size_t len)
{
    time_t s = (time_t)t;
    struct tm tm;
    localtime_r(&s, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* A signal by name (USR1, SIGUSR1, any case) or number (1 to 64); 0 if it is none. */
int cu_signal_number(const char *s)
{
    static const struct { const char *name; int sig; } sigs[] = {
        {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},
        {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"URG", SIGURG},
        {"XCPU", SIGXCPU}, {"WINCH", SIGWINCH}};
    long v;
    if (strparse_long(s, 1, 64, &v) == 0)
        return (int)v;
    const char *n = strncasecmp(s, "SIG", 3) ? s : s + 3;
    for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
        if (!strcasecmp(n, sigs[k].name))
            return sigs[k].sig;
    return 0;
}

int cu_parse_job(const char *s, long long *id)
{
    long v;
    if (strparse_long(s, 1, LONG_MAX, &v) < 0)
        return cmd_fail("'%s' is not a job id", s);
    *id = v;
    return 0;
}

json_t *cu_job_ref(const char *s)
{
    long long id;
    const char *us = strchr(s, '_');
    if (us) {
        char a[24];
        long t;
        if ((size_t)(us - s) >= sizeof(a) || (snprintf(a, sizeof(a), "%.*s", (int)(us - s), s), 0) ||
            cu_parse_job(a, &id) || strparse_long(us + 1, 0, LONG_MAX, &t) < 0) {
            cmd_fail("'%s' is not a job id (12, or 12_3 for element 3 of array 12)", s);
            return NULL;
        }
        return json_string(s);
    }
    return cu_parse_job(s, &id) ? NULL : json_integer(id);
}

int cu_parse_limit(const char *arg, double *out)
{
    if (!strcasecmp(arg, "UNLIMITED") || !strcasecmp(arg, "INFINITE")) {
        *out = 0; /* no limit, as 0 */
        return 0;
    }
    return strparse_duration(arg, out) < 0 ? -1 : 0;
}
