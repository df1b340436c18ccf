#include "directives.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

int directive_split(const char *text, const char *name, char *buf, size_t buflen,
                    char **argv, int maxargs, char *err, size_t errlen)
{
    int argc = 0;
    argv[argc++] = (char *)name;
    size_t o = 0;
    const char *p = text;
    for (;;) {
        while (blank(*p))
            p++;
        if (!*p || *p == '\n' || *p == '#')
            break;
        if (argc >= maxargs) {
            snprintf(err, errlen, "more than %d words", maxargs - 1);
            return -1;
        }
        argv[argc++] = buf + o;
        char quote = 0;
        while (*p && *p != '\n') {
            char c = *p++;
            if (c == '\\') {
                if (!*p || *p == '\n')
                    break; /* a backslash at the end of the line: nothing to take */
                c = *p++;
            } else if (quote) {
                if (c == quote) {
                    quote = 0;
                    continue;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                continue;
            } else if (blank(c)) {
                break;
            } else if (c == '#') {
                p--; /* a comment: ends the word and the line */
                break;
            }
            if (o + 1 >= buflen) {
                snprintf(err, errlen, "too long");
                return -1;
            }
            buf[o++] = c;
        }
        if (quote) {
            snprintf(err, errlen, "a %s quote is not closed", quote == '"' ? "double" : "single");
            return -1;
        }
        buf[o++] = '\0';
        if (*p == '#')
            break;
    }
    argv[argc] = NULL;
    return argc;
}

/* The directive a line holds, or -1: "#SBATCH" at its very start, "#DUCTILE" after
 * blanks; either followed by a blank or the end of the line. *text: what follows. */
static int directive_of(const char *t, const char **text)
{
    const char *d = t;
    while (blank(*d))
        d++;
    int kind = -1;
    size_t n = 0;
    if (d == t && !strncmp(t, "#SBATCH", 7)) {
        kind = DIRECTIVE_SBATCH;
        n = 7;
    } else if (!strncmp(d, "#DUCTILE", 8)) {
        kind = DIRECTIVE_DUCTILE;
        n = 8;
    }
    if (kind < 0 || (d[n] && d[n] != '\n' && !blank(d[n])))
        return -1; /* "#SBATCHX" is just a comment */
    *text = d + n;
    return kind;
}

int directives_scan(const char *script, directive_fn fn, void *arg, int *late, char *err,
                    size_t errlen)
{
    int line = 0;
    bool commands = false;
    if (late)
        *late = 0;
    char words[DIRECTIVE_LINE_MAX];
    char *argv[DIRECTIVE_MAX_WORDS + 2];
    for (const char *p = script; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *t = p;
        p = eol ? eol + 1 : p + n;
        line++;
        const char *text;
        int kind = directive_of(t, &text);
        if (commands) { /* only looking for directives that come too late */
            if (kind >= 0) {
                if (late)
                    *late = line;
                return 0;
            }
            continue;
        }
        if (kind < 0) {
            const char *c = t;
            while (blank(*c))
                c++;
            if (*c && *c != '\n' && *c != '#') {
                commands = true; /* the first command ends the directives */
                if (!late)
                    return 0;
            }
            continue;
        }
        if (n >= DIRECTIVE_LINE_MAX) {
            snprintf(err, errlen, "line %d: directive longer than %d bytes", line,
                     DIRECTIVE_LINE_MAX - 1);
            return -1;
        }
        char why[64];
        int argc = directive_split(text, kind == DIRECTIVE_SBATCH ? "#SBATCH" : "#DUCTILE",
                                   words, sizeof(words), argv, DIRECTIVE_MAX_WORDS + 1, why,
                                   sizeof(why));
        if (argc < 0) {
            snprintf(err, errlen, "line %d: %s", line, why);
            return -1;
        }
        int rc = fn((directive_kind_t)kind, argc, argv, line, arg);
        if (rc)
            return rc;
    }
    return 0;
}
