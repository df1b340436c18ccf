#include "directives.h"

#include <stdio.h>
#include <string.h>

#define LINE_MAX_LEN 4096

int directives_scan(const char *script, directive_needs_value_fn needs_value, directive_fn fn,
                    void *arg, char *err, size_t errlen)
{
    int line = 0;
    for (const char *p = script; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        line++;
        const char *next = eol ? eol + 1 : p + n;
        char buf[LINE_MAX_LEN];
        if (n >= sizeof(buf)) {
            if (!strncmp(p + strspn(p, " \t"), "#DUCTILE", 8)) {
                snprintf(err, errlen, "line %d: directive longer than %d bytes", line,
                         LINE_MAX_LEN - 1);
                return -1;
            }
            n = sizeof(buf) - 1;
        }
        memcpy(buf, p, n);
        buf[n] = '\0';
        p = next;
        char *t = buf + strspn(buf, " \t\r");
        if (!*t || (*t == '#' && strncmp(t, "#DUCTILE", 8)))
            continue; /* blank line or plain comment */
        if (*t != '#')
            break; /* the first command ends the directives */
        if (t[8] && t[8] != ' ' && t[8] != '\t' && t[8] != '\r')
            continue; /* "#DUCTILEX" is just a comment */
        char *save = NULL;
        for (char *tok = strtok_r(t + 8, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
            if (strncmp(tok, "--", 2) || !tok[2]) {
                snprintf(err, errlen, "line %d: '%.40s' is not a --option", line, tok);
                return -1;
            }
            char *eq = strchr(tok, '='), *val = NULL;
            if (eq) {
                *eq = '\0';
                val = eq + 1;
            }
            if (!val && needs_value && needs_value(tok + 2, arg)) {
                val = strtok_r(NULL, " \t\r", &save);
                if (!val) {
                    snprintf(err, errlen, "line %d: %.40s needs a value", line, tok);
                    return -1;
                }
            }
            int rc = fn(tok + 2, val, line, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}
