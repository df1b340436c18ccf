/* nodeset: a fixed-size bitmap of node indices (0 .. size-1).
 *
 * The engine keeps its free and available nodes in nodesets; the simulator and the
 * tools print node lists in the compact range form "0-3,7,9-12". */
#ifndef DUCTILE_NODESET_H
#define DUCTILE_NODESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nodeset nodeset_t;

nodeset_t *nodeset_create(int size);
void nodeset_destroy(nodeset_t *ns);
int nodeset_size(const nodeset_t *ns);

void nodeset_set(nodeset_t *ns, int i);
void nodeset_clear(nodeset_t *ns, int i);
bool nodeset_test(const nodeset_t *ns, int i);
void nodeset_set_all(nodeset_t *ns);
void nodeset_clear_all(nodeset_t *ns);
int nodeset_count(const nodeset_t *ns);

/* Clears the k lowest set indices and writes them, ascending, to out. Returns how
 * many were taken (fewer than k if the set ran out). */
int nodeset_take_lowest(nodeset_t *ns, int k, int *out);
/* Indices set in ns that are also in mask and not in avoid (either may be NULL: no
 * restriction). */
int nodeset_count_in(const nodeset_t *ns, const nodeset_t *mask, const nodeset_t *avoid);
/* nodeset_take_lowest over the indices that are also in mask and not in avoid (either
 * may be NULL: no restriction). */
int nodeset_take_lowest_in(nodeset_t *ns, const nodeset_t *mask, const nodeset_t *avoid, int k,
                           int *out);
/* A hash of the set's members, and whether two sets of the same size are equal. */
uint64_t nodeset_hash(const nodeset_t *ns);
bool nodeset_equal(const nodeset_t *a, const nodeset_t *b);
/* Sets every index of ids[0..n) that is also in mask (mask may be NULL: all);
 * returns how many were set. */
int nodeset_set_ids(nodeset_t *ns, const nodeset_t *mask, const int *ids, int n);

/* First set index >= from, or -1. */
int nodeset_next(const nodeset_t *ns, int from);

/* Range form of the set ("0-3,7"); returns the length the full text needs (like
 * snprintf), so a caller can detect truncation. */
size_t nodeset_format(const nodeset_t *ns, char *buf, size_t len);

/* Parse the range form into ns (which is cleared first). Returns 0, or -1 with a
 * message in err naming the offending text. */
int nodeset_parse(nodeset_t *ns, const char *text, char *err, size_t errlen);

/* Range form of an arbitrary list of indices (need not be sorted; duplicates are
 * printed once). Same return convention as nodeset_format. */
size_t nodeset_format_ids(const int *ids, int n, char *buf, size_t len);

#endif
