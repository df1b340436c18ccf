/* strparse: strict parsers for what users type (counts, ids, durations), and the
 * checking and escaping of user text (job names, paths) that other users will see.
 *
 * Strict means: the whole string, decimal digits only. No leading space or sign, no
 * hex ("0x10"), no exponent ("1e3"), no "inf" or "nan", no trailing garbage, no
 * overflow. strtol and strtod accept all of these, which is how "--time=0x10" became
 * 16 minutes and "--time=inf" a request that could not be encoded. */
#ifndef DUCTILE_STRPARSE_H
#define DUCTILE_STRPARSE_H

#include <stdbool.h>
#include <stddef.h>

/* A decimal integer in [min, max]: 0, -EINVAL (not a number) or -ERANGE (out of range). */
int strparse_long(const char *s, long min, long max, long *out);

/* "HOST:PORT" (the last colon separates them): host non-empty and shorter than hostlen,
 * the port a decimal in [min_port, 65535]. 0, -EINVAL (not HOST:PORT) or -ERANGE (the
 * port out of range). */
int strparse_hostport(const char *s, char *host, size_t hostlen, long min_port, int *port);
/* The longest time limit accepted (seconds): 100 years. */
#define STRPARSE_DURATION_MAX (100.0 * 365 * 86400)

/* A time limit in seconds, as Slurm writes them: MIN, MIN:SEC, H:MIN:SEC, D-H,
 * D-H:MIN, D-H:MIN:SEC, or a number with a unit (90s, 30m, 2h, 1d; a plain number
 * is minutes; these may have a decimal fraction: 1.5h). Minutes and seconds after a
 * colon are below 60. 0, -EINVAL or -ERANGE (above STRPARSE_DURATION_MAX). */
int strparse_duration(const char *s, double *out);

/* A non-negative decimal number, "250" or "70.5" (at most 9 decimals), at most max:
 * 0, -EINVAL or -ERANGE. */
int strparse_decimal(const char *s, double max, double *out);

/* An amount of memory in MiB, as sbatch --mem takes it: a whole number with an
 * optional unit K, M (the default), G or T (powers of 1024, either case; "512G" is
 * 524288). A size in K is rounded up to whole MiB. At most max MiB: 0, -EINVAL or
 * -ERANGE. */
int strparse_memory(const char *s, long max, long *out);

/* A point in time as users give one: "now", "+DURATION" from now (strparse_duration:
 * +30s, +10m, +2h), a Unix time, or a local date and time YYYY-MM-DDTHH:MM[:SS].
 * 0, -EINVAL or -ERANGE. */
int strparse_time(const char *s, double now, double *out);

/* True when s has a control character (below 0x20, or 0x7f): a newline or escape
 * sequence in a job name would be printed into other users' terminals. */
bool strparse_has_control(const char *s);
/* A time limit as the commands and messages print it: [D-]H:MM:SS, UNLIMITED for 0. */
void strparse_fmt_limit(double t, char *buf, size_t len);

/* s with control characters, backslashes and bytes that are not valid UTF-8 written
 * as C escapes ("\n", "\t", "\\", "\x1b"), so that any stored text prints as one
 * line and no byte of it is a terminal command. Returns a new string (NULL: out of
 * memory) the caller frees; NULL s gives "". */
char *strparse_escape(const char *s);

/* UTF-8 text cut to columns: the number of bytes of s's first maxchars characters (a
 * byte that is not valid UTF-8 counts as one character), and in *chars (not NULL) how
 * many characters that is. A name cut to 20 columns is cut between characters, never
 * inside one: half a character is not UTF-8, and JSON cannot carry it. */
size_t strparse_utf8_cut(const char *s, size_t maxchars, size_t *chars);
/* The number of characters of s, as strparse_utf8_cut counts them. */
size_t strparse_utf8_chars(const char *s);
/* Makes s valid UTF-8 in place: a sequence cut at the end (by a bounded snprintf) is
 * dropped, any other invalid byte becomes '?'. For messages built from user text. */
void strparse_utf8_fix(char *s);

#endif
