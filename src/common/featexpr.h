/* featexpr: node features and the --constraint expressions over them.
 *
 * A node's features are a comma-separated list of names ("gpu,a100"). A job's
 * constraint combines names with & (and) and | (or), & binding tighter, with
 * parentheses: "gpu&a100", "a100|h100", "gpu&(a100|h100)". A name is letters, digits,
 * '_', '-' and '.'. Slurm's matching OR ("[a|b]") and counts ("a*2") are refused by
 * name. */
#ifndef DUCTILE_FEATEXPR_H
#define DUCTILE_FEATEXPR_H

#include <stdbool.h>
#include <stddef.h>

/* Longest expression or feature list accepted. */
#define FEATEXPR_MAX 1024

/* Is expr a well-formed constraint? 0, or -EINVAL with the reason in err. */
int featexpr_check(const char *expr, char *err, size_t errlen);
/* Does a node with these features (a list, NULL: none) satisfy expr (checked)? */
bool featexpr_match(const char *expr, const char *list);
/* Is list a well-formed feature list ("gpu,a100")? 0, or -EINVAL with err. */
int featexpr_check_list(const char *list, char *err, size_t errlen);
/* Calls fn for each feature name in expr (checked) or in a list, in order; stops at
 * the first non-zero return and returns it. */
int featexpr_each(const char *text, int (*fn)(const char *name, size_t len, void *arg),
                  void *arg);
/* Does the list hold the name (len bytes)? */
bool featexpr_has(const char *list, const char *name, size_t len);

#endif
