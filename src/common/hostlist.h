/* hostlist: Slurm-style host lists such as "login,n[01-16],gpu[1-2,5]".
 *
 * Configuration files and commands name nodes this way; the daemons work with the
 * expanded names. Expansion keeps zero padding (the width of a range is the number
 * of digits its lower bound is written with: "n[08-10]" is n08 n09 n10, "n[8-10]" is
 * n8 n9 n10) and the order of the text. Several bracket groups in one name multiply
 * out, the first group varying slowest: "r[1-2]n[1-2]" is r1n1 r1n2 r2n1 r2n2.
 *
 * Host names are 1..HOSTLIST_NAME_MAX characters from letters, digits, '-', '_' and
 * '.'. A list holds at most HOSTLIST_MAX_HOSTS names and never the same name twice.
 * Blanks around the comma-separated items are ignored; blanks inside an item are not
 * allowed. */
#ifndef DUCTILE_HOSTLIST_H
#define DUCTILE_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>

#define HOSTLIST_MAX_HOSTS 1000000
#define HOSTLIST_NAME_MAX 63

/* Expands text into a new array of *count names (each malloc'ed; free with
 * hostlist_free). Text with no items ("" or blanks) gives *count = 0 and
 * *names = NULL. Returns 0, or on error leaves *names = NULL, *count = 0, puts a
 * message quoting the offending text in err and returns -EINVAL (bad syntax, bad
 * name, duplicate), -E2BIG (more than HOSTLIST_MAX_HOSTS names) or -ENOMEM. */
int hostlist_expand(const char *text, char ***names, int *count, char *err, size_t errlen);

void hostlist_free(char **names, int count);

/* Writes the bracket form of names[0..count) to buf (truncated to len - 1 bytes
 * and NUL-terminated when len > 0) and returns the length the full text needs,
 * like snprintf. Consecutive names that share prefix and suffix merge into one
 * bracket group ("n01,n02,n03,n05" -> "n[01-03,05]"); runs of consecutive numbers
 * of the same width become ranges. Nothing is reordered, so hostlist_expand gives
 * back exactly the input for any list without duplicates. Returns -EINVAL if a name
 * is not a valid host name. */
int hostlist_compress(char *const *names, int count, char *buf, size_t len);

/* True if s is a valid host name (see above). */
bool hostlist_valid_name(const char *s);

/* A hash index from name to position in an array of names, for lookups in large
 * clusters. It points into the array, which must outlive it. */
typedef struct hostlist_index hostlist_index_t;

/* Builds an index over names[0..count). Returns 0, -ENOMEM, or -EEXIST when a name
 * repeats (then *dup, if not NULL, is the position of the second occurrence). */
int hostlist_index_create(char *const *names, int count, hostlist_index_t **out, int *dup);
void hostlist_index_destroy(hostlist_index_t *ix);
/* Position of name, or -1. */
int hostlist_index_find(const hostlist_index_t *ix, const char *name);

#endif
