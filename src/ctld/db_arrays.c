/* The arrays still being made (arrays.c): an array's elements are made a part per turn
 * of the loop, and a row here says which indices are left, so that a controller that
 * stops or dies in the middle makes the rest when it starts again. The row is written
 * in the batch of the array's first element, moved on in the batch of each part and
 * deleted in the batch of the last: what is on disk always agrees with the elements
 * that are. A table of its own, made on first use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ctld.h"

static int table(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS array_builds (array_id INTEGER PRIMARY KEY,"
                        " indices TEXT NOT NULL, made INTEGER NOT NULL)",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

/* One statement in the open batch; what says what it was for in the log. */
static int write_row(ctld_t *c, const char *sql, int64_t array, const char *text, int made,
                     const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = -EIO;
    if (db_write_begin(c) == 0 && table(c) == 0 &&
        sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, array);
        sqlite3_bind_int(st, 2, made); /* (SQLITE_RANGE, harmless, where there is no ?2) */
        if (text)
            sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    if (rc < 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "cannot %s of array %lld", what, (long long)array);
        db_batch_fail(c, msg); /* the elements of this batch go with it: none twice */
    }
    sqlite3_finalize(st);
    return rc;
}

int db_array_build_put(ctld_t *c, int64_t array, const int *idx, int n, int made)
{
    size_t len = (size_t)n * 12 + 1, at = 0;
    char *text = malloc(len);
    if (!text)
        return -ENOMEM;
    text[0] = 0;
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(text + at, len - at, k ? ",%d" : "%d", idx[k]);
    int rc = write_row(c, "INSERT OR REPLACE INTO array_builds VALUES (?1, ?3, ?2)", array, text,
                       made, "record the elements still to make");
    free(text);
    return rc;
}

int db_array_build_made(ctld_t *c, int64_t array, int made)
{
    return write_row(c, "UPDATE array_builds SET made = ?2 WHERE array_id = ?1", array, NULL,
                     made, "record the elements made");
}

int db_array_build_del(ctld_t *c, int64_t array)
{
    return write_row(c, "DELETE FROM array_builds WHERE array_id = ?1", array, NULL,
                     0, "record the end of the making");
}

/* "3,5,9" into a new array of ints; -1 when it is not such a list. */
static int parse_indices(const char *text, int **out)
{
    int n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    int *v = malloc((size_t)n * sizeof(int));
    if (!v)
        return -1;
    const char *p = text;
    for (int k = 0; k < n; k++) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || x > 1 << 30 || (*end && *end != ',')) {
            free(v);
            return -1;
        }
        v[k] = (int)x;
        p = *end ? end + 1 : end;
    }
    *out = v;
    return n;
}

typedef struct row {
    int64_t array;
    int *idx, n, made; /* n < 0: the row cannot be read */
} row_t;

int db_array_builds(ctld_t *c, void (*fn)(ctld_t *c, int64_t array, int *idx, int n, int made))
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "SELECT array_id, indices, made FROM array_builds", -1, &st,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0; /* no table: no array was ever made in parts */
    }
    /* read whole first: fn writes (the statement must not be open meanwhile) */
    row_t *rows = NULL;
    size_t nrows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        row_t *more = realloc(rows, (nrows + 1) * sizeof(*rows));
        if (!more)
            break;
        rows = more;
        row_t *r = &rows[nrows++];
        const char *text = (const char *)sqlite3_column_text(st, 1);
        *r = (row_t){.array = sqlite3_column_int64(st, 0), .made = sqlite3_column_int(st, 2)};
        r->n = text ? parse_indices(text, &r->idx) : -1;
        if (r->n >= 0 && (r->made < 1 || r->made > r->n)) {
            free(r->idx);
            r->n = -1;
        }
    }
    sqlite3_finalize(st);
    for (size_t k = 0; k < nrows; k++) {
        if (rows[k].n >= 0) {
            fn(c, rows[k].array, rows[k].idx, rows[k].n, rows[k].made); /* takes idx */
            continue;
        }
        fprintf(stderr, "ductiled: database: the elements still to make of array %lld cannot "
                "be read: the array keeps the elements it has\n", (long long)rows[k].array);
        db_array_build_del(c, rows[k].array);
    }
    free(rows);
    return rc == SQLITE_DONE ? 0 : -EIO;
}
