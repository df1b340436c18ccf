/* directives: the option lines at the top of a batch script, "#SBATCH -N 2" (as Slurm's
 * sbatch reads them) and "#DUCTILE --nodes=2". They are read before the first command;
 * blank lines and other comments may come between them.
 *
 * A line's words are split as sbatch splits them: blanks separate words, single and
 * double quotes group (and are removed), a backslash takes the next character as it
 * is, and an unquoted # starts a comment to the end of the line. "#SBATCH" counts only
 * at the start of a line, as in Slurm; "#DUCTILE" may be indented. Pure text
 * processing, shared by `ductile submit` and its tests and fuzz target. */
#ifndef DUCTILE_DIRECTIVES_H
#define DUCTILE_DIRECTIVES_H

#include <stddef.h>

typedef enum { DIRECTIVE_SBATCH, DIRECTIVE_DUCTILE } directive_kind_t;

#define DIRECTIVE_MAX_WORDS 64
#define DIRECTIVE_LINE_MAX 4096

/* Called for each directive line, in the script's order. argv[0] is the directive's
 * name ("#SBATCH" or "#DUCTILE"), argv[1..argc-1] its words, argv[argc] NULL: ready for
 * getopt_long. The words live until the callback returns. Returns 0 to go on,
 * non-zero to stop (the scan returns that value). */
typedef int (*directive_fn)(directive_kind_t kind, int argc, char **argv, int line, void *arg);

/* 0, or -1 with "line N: ..." in err for a malformed directive (a quote left open, a
 * line too long or of too many words); a callback's non-zero result is returned as is.
 * *late (if not NULL) is set to the line of the first directive that comes after the
 * first command, which sbatch ignores and so does this scan (0: none). */
int directives_scan(const char *script, directive_fn fn, void *arg, int *late, char *err,
                    size_t errlen);

/* The words of one directive's text (what follows "#SBATCH"), split as above, into
 * buf; argv[0] is set to name. Returns the number of entries of argv (argc), or -1 with
 * a reason in err. */
int directive_split(const char *text, const char *name, char *buf, size_t buflen,
                    char **argv, int maxargs, char *err, size_t errlen);

#endif
