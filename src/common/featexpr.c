#include "featexpr.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DEPTH_MAX 32

static bool namechar(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

bool featexpr_has(const char *list, const char *name, size_t len)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && !strncmp(p, name, len))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* One pass over an expression: checks it and evaluates it against a node's list.
 * Both sides of every operator are read (no short cut), so that a check sees all. */
typedef struct ev {
    const char *start, *p;
    const char *list;
    int depth;
    int rc;
    char *err;
    size_t errlen;
} ev_t;

static bool bad(ev_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(ev_t *e, const char *fmt, ...)
{
    if (e->rc == 0 && e->err && e->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->err, e->errlen, fmt, ap);
        va_end(ap);
    }
    e->rc = -EINVAL;
    return false;
}

static void skip(ev_t *e)
{
    while (*e->p == ' ' || *e->p == '\t')
        e->p++;
}

static bool ev_or(ev_t *e);

static bool ev_atom(ev_t *e)
{
    skip(e);
    int at = (int)(e->p - e->start) + 1;
    char c = *e->p;
    if (c == '(') {
        if (++e->depth > DEPTH_MAX)
            return bad(e, "more than %d parentheses inside each other", DEPTH_MAX);
        e->p++;
        bool v = ev_or(e);
        skip(e);
        if (*e->p != ')')
            return bad(e, "the '(' at position %d is not closed", at);
        e->p++;
        e->depth--;
        return v;
    }
    if (namechar(c)) {
        const char *s = e->p;
        while (namechar(*e->p))
            e->p++;
        return featexpr_has(e->list, s, (size_t)(e->p - s));
    }
    if (c == '[')
        return bad(e, "matching OR ([a|b]) is not supported: write a|b");
    if (!c)
        return bad(e, e->p == e->start ? "the constraint is empty"
                                       : "it ends where a feature name should be");
    return bad(e, "'%c' at position %d is not a feature name, & (and), | (or) or a parenthesis",
               isprint((unsigned char)c) ? c : '?', at);
}

static bool ev_and(ev_t *e)
{
    bool v = ev_atom(e);
    for (skip(e); *e->p == '&'; skip(e)) {
        e->p++;
        v = ev_atom(e) && v;
    }
    return v;
}

static bool ev_or(ev_t *e)
{
    bool v = ev_and(e);
    for (skip(e); *e->p == '|'; skip(e)) {
        e->p++;
        v = ev_and(e) || v;
    }
    return v;
}

static bool evaluate(const char *expr, const char *list, char *err, size_t errlen, int *rc)
{
    ev_t e = {.start = expr, .p = expr, .list = list, .err = err, .errlen = errlen};
    bool v = strlen(expr) > FEATEXPR_MAX ? bad(&e, "longer than %d characters", FEATEXPR_MAX)
                                         : ev_or(&e);
    skip(&e);
    char c = *e.p;
    if (e.rc == 0 && c) {
        int at = (int)(e.p - expr) + 1;
        if (c == ')')
            bad(&e, "the ')' at position %d closes nothing", at);
        else if (c == ',')
            bad(&e, "',' is not an operator: write & (and) or | (or)");
        else if (c == '*')
            bad(&e, "feature counts (a*2) are not supported");
        else
            bad(&e, "'%c' at position %d: an operator (& or |) is missing before it",
                isprint((unsigned char)c) ? c : '?', at);
    }
    *rc = e.rc;
    return e.rc == 0 && v;
}

int featexpr_check(const char *expr, char *err, size_t errlen)
{
    int rc;
    evaluate(expr ? expr : "", NULL, err, errlen, &rc);
    return rc;
}

bool featexpr_match(const char *expr, const char *list)
{
    int rc;
    return evaluate(expr, list, NULL, 0, &rc);
}

int featexpr_check_list(const char *list, char *err, size_t errlen)
{
    if (strlen(list) > FEATEXPR_MAX)
        return snprintf(err, errlen, "longer than %d characters", FEATEXPR_MAX), -EINVAL;
    for (const char *p = list;;) {
        size_t n = 0;
        while (namechar(p[n]))
            n++;
        if (n == 0 || (p[n] && p[n] != ','))
            return snprintf(err, errlen,
                            "'%s' is not a list of features (names of letters, digits, '_', '-' "
                            "and '.', separated by commas: gpu,a100)", list),
                   -EINVAL;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int featexpr_each(const char *text, int (*fn)(const char *name, size_t len, void *arg),
                  void *arg)
{
    for (const char *p = text; *p;) {
        if (!namechar(*p)) {
            p++;
            continue;
        }
        const char *s = p;
        while (namechar(*p))
            p++;
        int rc = fn(s, (size_t)(p - s), arg);
        if (rc)
            return rc;
    }
    return 0;
}
