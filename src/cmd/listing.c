/* Job listings for queue and history (listing.h): the field table, --format parsing
 * (names or squeue -o's letters), --sort (squeue -S), and the printer. */
#define _GNU_SOURCE /* qsort_r */
#include "listing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

#define MAX_COLS 64

typedef char *(*value_fn)(const json_t *j, const listing_ctx_t *x);
typedef double (*num_fn)(const json_t *j);

/* A field: its name in queue and in history (NULL: not there), another name both
 * take, squeue's letter (-o and -S), queue's header (history's is the name, as sacct
 * prints it), its text, and the number it sorts by (NULL: by its text). */
typedef struct field {
    const char *qname, *hname, *alias;
    char letter;
    const char *hdr;
    value_fn value;
    num_fn num;
} field_t;

typedef struct col {
    int field;
    const char *hdr; /* NULL: the field's own */
    int width;       /* > 0: exactly that wide (cut or padded); 0: as wide as the values;
                        -1: each value as it is (squeue -o's %j without a width) */
    int max;         /* width 0: at most this many characters of a value (0: all) */
    bool right;
    char *sep; /* printed before it: "  " between named columns, -o's text between %s */
} col_t;

struct listing {
    col_t cols[MAX_COLS];
    int n;
    char *tail; /* -o's text after its last % */
};

static double num(const json_t *j, const char *key) { return cu_num(j, key); }
static long long inum(const json_t *j, const char *key)
{
    return (long long)json_integer_value(json_object_get(j, key));
}
static char *esc(const json_t *j, const char *key) { return strparse_escape(cu_str(j, key)); }
static bool pending(const json_t *j) { return !strcmp(cu_str(j, "state"), "PD"); }

static char *duration(double secs)
{
    char t[48];
    cu_fmt_duration(secs, t, sizeof(t));
    return cu_sprintf("%s", t);
}

/* A time, or squeue's N/A (sacct's Unknown) when there is none. */
static char *when(double t, const listing_ctx_t *x)
{
    char buf[48];
    if (t <= 0)
        return cu_sprintf("%s", x->cmd == LISTING_HISTORY ? "Unknown" : "N/A");
    cu_fmt_time(t, buf, sizeof(buf));
    return cu_sprintf("%s", buf);
}

char *listing_job_label(const json_t *j)
{
    if (json_is_string(json_object_get(j, "folded"))) /* set by the controller */
        return esc(j, "folded");
    if (json_object_get(j, "array_id"))
        return cu_sprintf("%lld_%lld", inum(j, "array_id"), inum(j, "array_task"));
    return cu_sprintf("%lld", inum(j, "id"));
}

static char *v_jobid(const json_t *j, const listing_ctx_t *x)
{
    if (json_object_get(j, "step_label")) /* history --steps: "12.batch", "12.0" */
        return esc(j, "step_label");
    return listing_job_label(j);
}
static char *v_jobid_raw(const json_t *j, const listing_ctx_t *x)
{
    return cu_sprintf("%lld", inum(j, "id"));
}
static char *v_name(const json_t *j, const listing_ctx_t *x) { return esc(j, "name"); }
static char *v_user(const json_t *j, const listing_ctx_t *x) { return esc(j, "user"); }
static char *v_account(const json_t *j, const listing_ctx_t *x)
{
    (void)x;
    return *cu_str(j, "account") ? esc(j, "account") : cu_sprintf("N/A");
}
static char *v_priority(const json_t *j, const listing_ctx_t *x)
{
    (void)x;
    const json_t *p = json_object_get(j, "priority");
    return p ? cu_sprintf("%.0f", json_number_value(p)) : cu_sprintf("N/A");
}
static char *v_nice(const json_t *j, const listing_ctx_t *x)
{
    (void)x;
    return cu_sprintf("%lld", inum(j, "nice"));
}
static char *v_state(const json_t *j, const listing_ctx_t *x) { return esc(j, "state_name"); }
static char *v_st(const json_t *j, const listing_ctx_t *x) { return esc(j, "state"); }
static char *v_type(const json_t *j, const listing_ctx_t *x) { return esc(j, "type"); }
static char *v_nodelist(const json_t *j, const listing_ctx_t *x) { return esc(j, "nodelist"); }
static char *v_nodes(const json_t *j, const listing_ctx_t *x)
{
    return cu_sprintf("%lld", inum(j, "nodes"));
}
/* what a job waits for; squeue's None once it runs (history: why it ended, if said) */
static char *v_reason(const json_t *j, const listing_ctx_t *x)
{
    if (x->cmd == LISTING_HISTORY)
        return esc(j, "reason");
    return pending(j) && *cu_str(j, "reason") ? esc(j, "reason") : cu_sprintf("None");
}
/* squeue's %R: (reason) while pending, the nodes after */
static char *v_reasonlist(const json_t *j, const listing_ctx_t *x)
{
    if (!pending(j))
        return esc(j, "nodelist");
    char *r = esc(j, "reason");
    char *s = cu_sprintf("(%s)", r ? r : "");
    free(r);
    return s;
}
static char *v_elapsed(const json_t *j, const listing_ctx_t *x)
{
    return duration(num(j, "elapsed"));
}
static char *v_limit(const json_t *j, const listing_ctx_t *x)
{
    return num(j, "time_limit") > 0 ? duration(num(j, "time_limit")) : cu_sprintf("UNLIMITED");
}
static double n_left(const json_t *j)
{
    double l = num(j, "time_limit");
    return l > 0 ? fmax(0, l - num(j, "elapsed")) : HUGE_VAL;
}
static char *v_left(const json_t *j, const listing_ctx_t *x)
{
    return isinf(n_left(j)) ? cu_sprintf("UNLIMITED") : duration(n_left(j));
}
static char *v_submit(const json_t *j, const listing_ctx_t *x) { return when(num(j, "submit"), x); }
static char *v_end(const json_t *j, const listing_ctx_t *x) { return when(num(j, "end"), x); }
/* when it started, or for a pending job when the scheduler plans to start it (its
 * reservation, or its --begin), if it knows */
static double start_of(const json_t *j)
{
    return pending(j) ? num(j, "expected_start") : num(j, "start");
}
static char *v_start(const json_t *j, const listing_ctx_t *x) { return when(start_of(j), x); }
static double n_start(const json_t *j) { return start_of(j) > 0 ? start_of(j) : HUGE_VAL; }
static double n_array_job(const json_t *j)
{
    return (double)(json_object_get(j, "array_id") ? inum(j, "array_id") : inum(j, "id"));
}
static char *v_array_job(const json_t *j, const listing_ctx_t *x)
{
    return cu_sprintf("%.0f", n_array_job(j));
}
static char *v_array_task(const json_t *j, const listing_ctx_t *x)
{
    const char *f = cu_str(j, "folded"), *u = strchr(f, '_');
    if (u) /* the pending elements' line: "[3-6]" */
        return strparse_escape(u + 1);
    if (!json_object_get(j, "array_id"))
        return cu_sprintf("N/A");
    return cu_sprintf("%lld", inum(j, "array_task"));
}
static char *v_partition(const json_t *j, const listing_ctx_t *x)
{
    if (*cu_str(j, "partition")) /* the one it runs in, or those it may */
        return esc(j, "partition");
    return strparse_escape(x->cluster && *x->cluster ? x->cluster : "ductile");
}
static char *v_cpus(const json_t *j, const listing_ctx_t *x)
{
    long long c = x->cores_per_node > 0 ? x->cores_per_node : 1;
    return cu_sprintf("%lld", inum(j, "nodes") * c);
}
/* as sacct writes it, CODE:SIGNAL: 1:0 exited 1, 0:9 killed by signal 9, 0:0 for a job
 * that never ran (cancelled while pending) */
static char *v_exit(const json_t *j, const listing_ctx_t *x)
{
    long long sig = inum(j, "signal"), ec = inum(j, "exit_code");
    return cu_sprintf("%lld:%lld", sig || ec < 0 ? 0 : ec, sig);
}
static char *v_nodesecs(const json_t *j, const listing_ctx_t *x)
{
    return cu_sprintf("%.0f", num(j, "node_seconds"));
}
static char *v_energy(const json_t *j, const listing_ctx_t *x)
{
    char t[48];
    cu_fmt_energy(num(j, "energy"), t, sizeof(t));
    return cu_sprintf("%s", t);
}
static char *v_sizes(const json_t *j, const listing_ctx_t *x)
{
    return cu_sprintf("%.40s", *cu_str(j, "sizes") ? cu_str(j, "sizes") : "-");
}

/* sacct's TotalCPU: [D-][HH:]MM:SS.mmm, the user and system time of every process */
static char *v_totalcpu(const json_t *j, const listing_ctx_t *x)
{
    if (!json_is_number(json_object_get(j, "total_cpu")))
        return cu_sprintf("%s", "");
    double t = num(j, "total_cpu");
    long long ms = (long long)(t * 1000 + 0.5), s = ms / 1000;
    long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
    if (d)
        return cu_sprintf("%lld-%02lld:%02lld:%02lld", d, h, m, s % 60);
    if (h)
        return cu_sprintf("%02lld:%02lld:%02lld", h, m, s % 60);
    return cu_sprintf("%02lld:%02lld.%03lld", m, s % 60, ms % 1000);
}
/* sacct's MaxRSS, in K: the largest process's (or the cgroup's) peak memory */
static char *v_maxrss(const json_t *j, const listing_ctx_t *x)
{
    if (!json_is_integer(json_object_get(j, "max_rss")))
        return cu_sprintf("%s", "");
    return cu_sprintf("%lldK", (inum(j, "max_rss") + 1023) / 1024);
}

static double n_id(const json_t *j) { return num(j, "id"); }
static double n_totalcpu(const json_t *j) { return num(j, "total_cpu"); }
static double n_maxrss(const json_t *j) { return num(j, "max_rss"); }
static double n_nodes(const json_t *j) { return num(j, "nodes"); }
static double n_elapsed(const json_t *j) { return num(j, "elapsed"); }
static double n_limit(const json_t *j)
{
    return num(j, "time_limit") > 0 ? num(j, "time_limit") : HUGE_VAL;
}
static double n_submit(const json_t *j) { return num(j, "submit"); }
static double n_end(const json_t *j) { return num(j, "end"); }
static double n_task(const json_t *j)
{
    return json_object_get(j, "array_id") ? num(j, "array_task") : -1;
}
static double n_nodesecs(const json_t *j) { return num(j, "node_seconds"); }
static double n_energy(const json_t *j) { return num(j, "energy"); }
static double n_priority(const json_t *j) { return num(j, "priority"); }
static double n_nice(const json_t *j) { return num(j, "nice"); }

static const field_t fields[] = {
    {"JobID", "JobID", NULL, 'i', "JOBID", v_jobid, n_id},
    {"JobIDRaw", "JobIDRaw", NULL, 'A', "JOBID", v_jobid_raw, n_id},
    {"Name", "JobName", "JobName", 'j', "NAME", v_name, NULL},
    {"User", "User", "UserName", 'u', "USER", v_user, NULL},
    {"Account", "Account", NULL, 'a', "ACCOUNT", v_account, NULL},
    {"Priority", NULL, NULL, 'Q', "PRIORITY", v_priority, n_priority},
    {"Nice", NULL, NULL, 'y', "NICE", v_nice, n_nice},
    {"State", "State", NULL, 'T', "STATE", v_state, NULL},
    {"StateCompact", "StateCompact", "ST", 't', "ST", v_st, NULL},
    {"TimeUsed", "Elapsed", "Elapsed", 'M', "TIME", v_elapsed, n_elapsed},
    {"NumNodes", "NNodes", "Nodes", 'D', "NODES", v_nodes, n_nodes},
    {"NodeList", "NodeList", NULL, 'N', "NODELIST", v_nodelist, NULL},
    {NULL, "ExitCode", "Exit", 0, "EXIT_CODE", v_exit, NULL},
    {"SubmitTime", "Submit", "Submit", 'V', "SUBMIT_TIME", v_submit, n_submit},
    {"StartTime", "Start", "Start", 'S', "START_TIME", v_start, n_start},
    {NULL, "End", "EndTime", 0, "END_TIME", v_end, n_end},
    {"TimeLimit", "Timelimit", NULL, 'l', "TIME_LIMIT", v_limit, n_limit},
    {"TimeLeft", NULL, NULL, 'L', "TIME_LEFT", v_left, n_left},
    {NULL, "NodeSecs", NULL, 0, "NODESECS", v_nodesecs, n_nodesecs},
    {NULL, "Energy", NULL, 0, "ENERGY", v_energy, n_energy},
    {NULL, "Sizes", NULL, 0, "SIZES", v_sizes, NULL},
    {NULL, "TotalCPU", NULL, 0, "TOTALCPU", v_totalcpu, n_totalcpu},
    {NULL, "MaxRSS", NULL, 0, "MAXRSS", v_maxrss, n_maxrss},
    {"Reason", "Reason", NULL, 'r', "REASON", v_reason, NULL},
    {"ReasonList", NULL, NULL, 'R', "NODELIST(REASON)", v_reasonlist, NULL},
    {"Type", "Type", NULL, 0, "TYPE", v_type, NULL},
    {"ArrayJobID", "ArrayJobID", NULL, 'F', "ARRAY_JOB_ID", v_array_job, n_array_job},
    {"ArrayTaskID", "ArrayTaskID", NULL, 'K', "ARRAY_TASK_ID", v_array_task, n_task},
    {"Partition", NULL, NULL, 'P', "PARTITION", v_partition, NULL},
    {"CPUs", NULL, "NumCPUs", 'C', "CPUS", v_cpus, n_nodes},
};
#define NFIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

static const char *name_in(const listing_ctx_t *x, int f)
{
    return x->cmd == LISTING_QUEUE ? fields[f].qname : fields[f].hname;
}

/* the field named w (any case) in this command's list, or -1 */
static int field_named(const listing_ctx_t *x, const char *w, size_t len)
{
    for (int f = 0; f < NFIELDS; f++) {
        const char *names[3] = {fields[f].qname, fields[f].hname, fields[f].alias};
        for (int k = 0; name_in(x, f) && k < 3; k++)
            if (names[k] && strlen(names[k]) == len && !strncasecmp(w, names[k], len))
                return f;
    }
    return -1;
}

static int field_of_letter(const listing_ctx_t *x, char c)
{
    for (int f = 0; f < NFIELDS; f++)
        if (c && fields[f].letter == c && name_in(x, f))
            return f;
    return -1;
}

/* "JobID, Name, ...": the names this command takes; "%i %A ... %%": the letters of
 * -o; "i, A, ...": the letters of -S */
enum { NAMES, LETTERS, KEYS };
static void valid_list(const listing_ctx_t *x, int style, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int f = 0; f < NFIELDS && at < len; f++) {
        if (!name_in(x, f) || (style != NAMES && !fields[f].letter))
            continue;
        if (style == LETTERS)
            at += (size_t)snprintf(buf + at, len - at, "%s%%%c", at ? " " : "", fields[f].letter);
        else if (style == KEYS)
            at += (size_t)snprintf(buf + at, len - at, "%s%c", at ? ", " : "", fields[f].letter);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", name_in(x, f));
    }
    if (style == LETTERS && at < len)
        snprintf(buf + at, len - at, " %%%%");
}

void listing_free(listing_t *l)
{
    if (!l)
        return;
    for (int c = 0; c < l->n; c++)
        free(l->cols[c].sep);
    free(l->tail);
    free(l);
}

static col_t *add_col(listing_t *l, const listing_ctx_t *x, int f, char *sep)
{
    if (!sep || l->n >= MAX_COLS) {
        free(sep);
        if (l->n >= MAX_COLS)
            cmd_fail("%s: at most %d fields", x->what, MAX_COLS);
        return NULL;
    }
    col_t *c = &l->cols[l->n++];
    memset(c, 0, sizeof(*c));
    c->field = f;
    c->sep = sep;
    return c;
}

/* ":20" or ":.20" after a field's name (squeue -O's width, "." right-justified) */
static int parse_width(const listing_ctx_t *x, const char *name, const char *w, col_t *c)
{
    long v;
    c->right = *w == '.';
    if (strparse_long(w + c->right, 1, 1000, &v) < 0)
        return cmd_fail("%s: '%s': the width after ':' must be a number from 1 to 1000 "
                        "(JobID:10, or JobID:.10 to right-justify)", x->what, name);
    c->width = (int)v;
    return 0;
}

static listing_t *parse_names(const listing_ctx_t *x, const char *format)
{
    listing_t *l = calloc(1, sizeof(*l));
    char *copy = strdup(format), *save = NULL;
    if (!l || !copy) {
        free(copy);
        free(l);
        return NULL;
    }
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(t, ':');
        char *pct = x->cmd == LISTING_HISTORY ? strchr(t, '%') : NULL; /* sacct's Field%W */
        size_t len = colon ? (size_t)(colon - t) : pct ? (size_t)(pct - t) : strlen(t);
        int f = field_named(x, t, len);
        if (f < 0) {
            char valid[1024];
            valid_list(x, NAMES, valid, sizeof(valid));
            cmd_fail("%s: '%.*s' is not a field (%s)", x->what, (int)len, t, valid);
            goto bad;
        }
        col_t *c = add_col(l, x, f, cu_sprintf("%s", l->n ? "  " : ""));
        if (!c || (colon && parse_width(x, t, colon + 1, c)))
            goto bad;
    }
    free(copy);
    if (!l->n) {
        cmd_fail("%s: give fields, such as JobID,State,Reason", x->what);
        listing_free(l);
        return NULL;
    }
    return l;
bad:
    free(copy);
    listing_free(l);
    return NULL;
}

/* squeue -o: text, and %[.|-][WIDTH]LETTER fields ("." right-justifies), %% a '%' */
static listing_t *parse_letters(const listing_ctx_t *x, const char *format)
{
    listing_t *l = calloc(1, sizeof(*l));
    size_t len = strlen(format);
    char *text = malloc(len + 1); /* the text since the last field */
    size_t tl = 0;
    if (!l || !text)
        goto bad;
    for (const char *p = format; *p;) {
        if (p[0] != '%' || p[1] == '%') {
            text[tl++] = *p;
            p += p[0] == '%' ? 2 : 1;
            continue;
        }
        const char *spec = p++;
        bool right = *p == '.';
        if (*p == '.' || *p == '-')
            p++;
        long width = 0;
        while (*p >= '0' && *p <= '9' && width < 1000)
            width = width * 10 + (*p++ - '0');
        int f = field_of_letter(x, *p);
        if (f < 0 || width >= 1000) {
            char valid[512];
            valid_list(x, LETTERS, valid, sizeof(valid));
            if (f < 0 && *p)
                cmd_fail("%s: '%%%c' is not a field letter (%s)", x->what, *p, valid);
            else
                cmd_fail("%s: '%.*s' is not a field: a letter must follow '%%' and its width "
                         "(up to 999): %s", x->what, (int)(p - spec + (*p != 0)), spec, valid);
            goto bad;
        }
        p++;
        text[tl] = '\0';
        col_t *c = add_col(l, x, f, cu_sprintf("%s", text));
        if (!c)
            goto bad;
        tl = 0;
        c->width = width ? (int)width : -1;
        c->right = right;
    }
    text[tl] = '\0';
    if (!l->n) {
        cmd_fail("%s: '%s' has no field (squeue's letters: \"%%.18i %%j %%t\")", x->what, format);
        goto bad;
    }
    l->tail = text;
    return l;
bad:
    free(text);
    listing_free(l);
    return NULL;
}

listing_t *listing_parse(const listing_ctx_t *x, const char *format)
{
    if (x->cmd == LISTING_QUEUE && strchr(format, '%'))
        return parse_letters(x, format);
    return parse_names(x, format);
}

listing_t *listing_layout(const listing_ctx_t *x, const listing_col_def_t *defs, int n)
{
    listing_t *l = calloc(1, sizeof(*l));
    for (int k = 0; l && k < n; k++) {
        int f = field_named(x, defs[k].field, strlen(defs[k].field));
        col_t *c = f < 0 ? NULL : add_col(l, x, f, cu_sprintf("%s", k ? "  " : ""));
        if (!c) {
            listing_free(l);
            return NULL;
        }
        c->hdr = defs[k].header;
        c->max = defs[k].max;
    }
    return l;
}

/* --- sorting */

typedef struct key {
    int field;
    bool desc;
} skey_t;

typedef struct srow {
    json_t *job;
    size_t pos;
    double *num;
    char **text;
} srow_t;

typedef struct sorting {
    const skey_t *keys;
    int n;
} sorting_t;

static int cmp_rows(const void *a, const void *b, void *arg)
{
    const srow_t *x = a, *y = b;
    const sorting_t *s = arg;
    for (int k = 0; k < s->n; k++) {
        int c;
        if (fields[s->keys[k].field].num)
            c = (x->num[k] > y->num[k]) - (x->num[k] < y->num[k]);
        else
            c = strcmp(x->text[k] ? x->text[k] : "", y->text[k] ? y->text[k] : "");
        if (c)
            return s->keys[k].desc ? -c : c;
    }
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* one key of -S: a letter (i, -t, ...), a name (State, -SubmitTime), or p / Priority:
 * the submission order, as Ductile has no priorities of its own */
static int parse_key(const listing_ctx_t *x, const char *t, skey_t *k)
{
    k->desc = *t == '-';
    t += *t == '-' || *t == '+';
    if (!strcmp(t, "p") || !strcasecmp(t, "Priority"))
        t = "SubmitTime";
    k->field = strlen(t) == 1 ? field_of_letter(x, *t) : field_named(x, t, strlen(t));
    if (k->field >= 0)
        return 0;
    char names[1024], letters[512];
    valid_list(x, NAMES, names, sizeof(names));
    valid_list(x, KEYS, letters, sizeof(letters));
    return cmd_fail("%s: '%s' is not a sort key (a field: %s, Priority; or squeue's letters: "
                    "%s, p; a '-' before a key sorts in descending order)", x->what, t, names,
                    letters);
}

static int parse_keys(const listing_ctx_t *x, const char *keys, skey_t *out, int *n)
{
    char *copy = strdup(keys), *save = NULL;
    *n = 0;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_COLS || parse_key(x, t, &out[*n])) {
            if (*n >= MAX_COLS)
                cmd_fail("%s: at most %d sort keys", x->what, MAX_COLS);
            free(copy);
            return 1;
        }
        (*n)++;
    }
    free(copy);
    if (!*n)
        return cmd_fail("%s: give sort keys, such as -t,i or State,-SubmitTime", x->what);
    return 0;
}

int listing_sort(const listing_ctx_t *x, json_t *jobs, const char *keys)
{
    skey_t k[MAX_COLS];
    int nk;
    if (parse_keys(x, keys, k, &nk))
        return 1;
    size_t n = json_array_size(jobs);
    srow_t *rows = calloc(n + 1, sizeof(srow_t));
    if (!rows)
        return cmd_fail("out of memory");
    for (size_t r = 0; r < n; r++) {
        rows[r].job = json_incref(json_array_get(jobs, r));
        rows[r].pos = r;
        rows[r].num = calloc((size_t)nk, sizeof(double));
        rows[r].text = calloc((size_t)nk, sizeof(char *));
        for (int q = 0; rows[r].num && rows[r].text && q < nk; q++) {
            const field_t *f = &fields[k[q].field];
            if (f->num)
                rows[r].num[q] = f->num(rows[r].job);
            else
                rows[r].text[q] = f->value(rows[r].job, x);
        }
    }
    sorting_t s = {k, nk};
    qsort_r(rows, n, sizeof(srow_t), cmp_rows, &s);
    json_array_clear(jobs);
    for (size_t r = 0; r < n; r++) {
        json_array_append_new(jobs, rows[r].job);
        for (int q = 0; rows[r].text && q < nk; q++)
            free(rows[r].text[q]);
        free(rows[r].text);
        free(rows[r].num);
    }
    free(rows);
    return 0;
}

/* --- printing */

static const char *header_of(const listing_ctx_t *x, const col_t *c)
{
    return c->hdr ? c->hdr : x->cmd == LISTING_QUEUE ? fields[c->field].hdr
                                                     : fields[c->field].hname;
}

/* a value (or a header: not cut to the column's max) padded to its column, cut to a
 * fixed width */
static void print_cell(const col_t *c, int w, const char *s, bool last, bool header)
{
    /* widths and cuts in characters, not bytes: a cut inside 'ö' is not UTF-8 */
    size_t chars, cut = strparse_utf8_cut(s, c->width > 0 ? (size_t)w
                                             : c->max > 0 && !header ? (size_t)c->max
                                                                    : (size_t)-1, &chars);
    int pad = w > (int)chars ? w - (int)chars : 0;
    fputs(c->sep, stdout);
    if (c->width < 0 || (last && !c->right && c->width == 0))
        pad = 0; /* not padded */
    printf("%*s%.*s%*s", c->right ? pad : 0, "", (int)cut, s, c->right ? 0 : pad, "");
}

static void print_line(const listing_ctx_t *x, const listing_t *l, const int *w, char **cells,
                       bool parsable)
{
    for (int c = 0; c < l->n; c++) {
        const char *s = cells ? (cells[c] ? cells[c] : "") : header_of(x, &l->cols[c]);
        if (parsable)
            printf("%s|", s);
        else
            print_cell(&l->cols[c], w[c], s, c + 1 == l->n, !cells);
    }
    if (!parsable && l->tail)
        fputs(l->tail, stdout);
    fputc('\n', stdout);
}

void listing_print(const listing_ctx_t *x, const listing_t *l, const json_t *jobs, bool noheader,
                   bool parsable)
{
    size_t n = json_array_size(jobs);
    char **cells = calloc(n * (size_t)l->n + 1, sizeof(char *));
    int w[MAX_COLS];
    if (!cells) {
        cmd_fail("out of memory");
        return;
    }
    for (int c = 0; c < l->n; c++) {
        const col_t *col = &l->cols[c];
        w[c] = col->width > 0 ? col->width : noheader ? 0 : (int)strlen(header_of(x, col));
        for (size_t r = 0; r < n; r++) {
            char *v = fields[col->field].value(json_array_get(jobs, r), x);
            int len = v ? (int)strparse_utf8_chars(v) : 0;
            if (col->max > 0 && len > col->max)
                len = col->max;
            if (col->width == 0 && len > w[c])
                w[c] = len;
            cells[r * (size_t)l->n + (size_t)c] = v;
        }
    }
    if (!noheader)
        print_line(x, l, w, NULL, parsable);
    for (size_t r = 0; r < n; r++)
        print_line(x, l, w, cells + r * (size_t)l->n, parsable);
    for (size_t k = 0; k < n * (size_t)l->n; k++)
        free(cells[k]);
    free(cells);
}
