/* directives: the "#DUCTILE --opt=value" lines at the top of a batch script.
 * They are read before the first command; blank lines and other comments may come
 * between them. Pure text processing, shared by `ductile submit` and its fuzz test. */
#ifndef DUCTILE_DIRECTIVES_H
#define DUCTILE_DIRECTIVES_H

#include <stddef.h>

/* Called for each "--name[=value]" (value NULL when absent, or the next word when the
 * option takes one: needs_value tells). Returns 0 to go on, non-zero to stop. */
typedef int (*directive_fn)(const char *name, const char *value, int line, void *arg);
typedef int (*directive_needs_value_fn)(const char *name, void *arg);

/* 0, or -1 with "line N: ..." in err for a malformed directive; a callback's non-zero
 * result is returned as is. */
int directives_scan(const char *script, directive_needs_value_fn needs_value, directive_fn fn,
                    void *arg, char *err, size_t errlen);

#endif
