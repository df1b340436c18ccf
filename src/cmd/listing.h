/* Job listings: the columns `ductile queue` and `ductile history` print. One table of
 * fields, named as squeue -O and sacct name them (with squeue -o's letters), serves both
 * commands: chosen with --format (names, FIELD:WIDTH, or squeue's "%.18i %j" letters),
 * sorted as squeue -S sorts, printed aligned or |-separated (--parsable). */
#ifndef DUCTILE_CMD_LISTING_H
#define DUCTILE_CMD_LISTING_H

#include <jansson.h>
#include <stdbool.h>

typedef enum { LISTING_QUEUE = 1, LISTING_HISTORY = 2 } listing_cmd_t;

/* What a listing needs besides the jobs: which command (its field names, headers and
 * words for "unknown"), and the cluster's name and cores per node (squeue's %P, %C). */
typedef struct listing_ctx {
    listing_cmd_t cmd;
    const char *what;    /* "queue: --format": how errors begin */
    const char *cluster; /* ClusterName; NULL: "ductile" */
    int cores_per_node;  /* CoresPerNode; 0: unknown */
} listing_ctx_t;

/* A column of a built-in layout: a field's name, its header, and at most how many
 * characters of its values are shown (0: all). */
typedef struct listing_col_def {
    const char *field, *header;
    int max;
} listing_col_def_t;

typedef struct listing listing_t; /* the chosen columns */

/* "JobID,Name:20,State" (FIELD:WIDTH, FIELD:.WIDTH right-justified) or, with a '%' in
 * it, squeue -o's "%.18i %-8j %t"; NULL once the error is printed. */
listing_t *listing_parse(const listing_ctx_t *x, const char *format);
/* A built-in layout (the commands' default tables); NULL: out of memory. */
listing_t *listing_layout(const listing_ctx_t *x, const listing_col_def_t *cols, int n);
void listing_free(listing_t *l);
/* Sorts jobs (a JSON array) by "-t,i" or "State,-SubmitTime" (squeue -S); ties keep
 * their order. 0, or 1 once the error is printed. */
int listing_sort(const listing_ctx_t *x, json_t *jobs, const char *keys);
/* The jobs as columns (or |-separated with parsable), a header line unless noheader. */
void listing_print(const listing_ctx_t *x, const listing_t *l, const json_t *jobs,
                   bool noheader, bool parsable);
/* How a job is shown: "12", "12_3" for an element of an array, or the line that
 * stands for pending elements, "12_[3-6]". */
char *listing_job_label(const json_t *j);

#endif
