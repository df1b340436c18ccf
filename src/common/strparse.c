#define _XOPEN_SOURCE 700 /* strptime */
#include "strparse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits only; at most 18 of them (no overflow of a 64-bit value). */
static int digits(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 18)
        return n == 0 ? -EINVAL : -ERANGE;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int strparse_long(const char *s, long min, long max, long *out)
{
    if (!s)
        return -EINVAL;
    bool neg = s[0] == '-' && min < 0;
    const char *p = neg ? s + 1 : s;
    size_t n = strlen(p);
    long long v;
    if (strspn(p, "0123456789") != n || n == 0)
        return -EINVAL;
    if (digits(p, n, &v) < 0)
        return -ERANGE;
    if (neg)
        v = -v;
    if (v < min || v > max)
        return -ERANGE;
    *out = (long)v;
    return 0;
}

int strparse_memory(const char *s, long max, long *out)
{
    if (!s || !*s)
        return -EINVAL;
    size_t n = strspn(s, "0123456789");
    char unit = (char)toupper((unsigned char)s[n]);
    if (n == 0 || (s[n] && (s[n + 1] || !strchr("KMGT", unit))))
        return -EINVAL;
    long long v;
    if (digits(s, n, &v) < 0)
        return -ERANGE;
    int shift = unit == 'G' ? 10 : unit == 'T' ? 20 : 0;
    if (unit == 'K')
        v = (v + 1023) / 1024;
    if (v > (long long)max >> shift)
        return -ERANGE;
    *out = (long)(v << shift);
    return 0;
}

int strparse_hostport(const char *s, char *host, size_t hostlen, long min_port, int *port)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon || colon == s || (size_t)(colon - s) >= hostlen)
        return -EINVAL;
    long p;
    int rc = strparse_long(colon + 1, min_port, 65535, &p);
    if (rc < 0)
        return rc;
    snprintf(host, hostlen, "%.*s", (int)(colon - s), s);
    *port = (int)p;
    return 0;
}

/* A non-negative decimal number "12" or "1.5" filling s[0..n). */
static int decimal(const char *s, size_t n, double *out)
{
    const char *dot = memchr(s, '.', n);
    size_t ni = dot ? (size_t)(dot - s) : n;
    long long ip, fp = 0;
    if (ni == 0)
        return -EINVAL;
    int rc = digits(s, ni, &ip);
    if (rc < 0)
        return rc;
    double v = (double)ip;
    if (dot) {
        size_t nf = n - ni - 1;
        if (nf == 0 || nf > 9)
            return nf == 0 ? -EINVAL : -ERANGE;
        if ((rc = digits(dot + 1, nf, &fp)) < 0)
            return rc;
        double scale = 1;
        for (size_t i = 0; i < nf; i++)
            scale *= 10;
        v += (double)fp / scale;
    }
    *out = v;
    return 0;
}

int strparse_decimal(const char *s, double max, double *out)
{
    if (!s || !*s || strspn(s, "0123456789.") != strlen(s))
        return -EINVAL;
    double v;
    int rc = decimal(s, strlen(s), &v);
    if (rc < 0)
        return rc;
    if (v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

int strparse_time(const char *s, double now, double *out)
{
    if (!s || !*s)
        return -EINVAL;
    if (!strcmp(s, "now")) {
        *out = now;
        return 0;
    }
    if (s[0] == '+') {
        double d;
        int rc = strparse_duration(s + 1, &d);
        if (rc == 0)
            *out = now + d;
        return rc;
    }
    long v;
    if (strparse_long(s, 0, LONG_MAX, &v) == 0) {
        *out = (double)v;
        return 0;
    }
    struct tm tm = {0};
    const char *e = strptime(s, "%Y-%m-%dT%H:%M", &tm);
    if (e && *e == ':')
        e = strptime(e, ":%S", &tm);
    if (!e || *e)
        return -EINVAL;
    tm.tm_isdst = -1;
    struct tm want = tm;
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return -ERANGE;
    /* mktime moves 2026-11-31 to 2026-12-01: a day that does not exist is an error */
    if (tm.tm_mday != want.tm_mday || tm.tm_mon != want.tm_mon || tm.tm_year != want.tm_year)
        return -EINVAL;
    *out = (double)t;
    return 0;
}

/* Fields of "a:b:c" as integers; returns the count (1 to 3) or a negative errno. */
static int fields(const char *s, long long f[3])
{
    int k = 0;
    for (const char *p = s;; k++) {
        if (k == 3)
            return -EINVAL;
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int rc = digits(p, n, &f[k]);
        if (rc < 0)
            return rc;
        if (!c)
            return k + 1;
        p = c + 1;
    }
}

int strparse_duration(const char *s, double *out)
{
    if (!s || !*s)
        return -EINVAL;
    size_t n = strlen(s);
    double v;
    if (!strpbrk(s, ":-")) {
        /* a number of minutes, or a number with a unit */
        double mul = 60;
        char u = s[n - 1];
        if (u == 's' || u == 'm' || u == 'h' || u == 'd') {
            mul = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : 86400;
            n--;
        }
        int rc = decimal(s, n, &v);
        if (rc < 0)
            return rc;
        v *= mul;
    } else {
        long long days = 0, f[3] = {0};
        const char *rest = s, *dash = strchr(s, '-');
        if (dash) {
            int rc = digits(s, (size_t)(dash - s), &days);
            if (rc < 0)
                return rc;
            rest = dash + 1;
        }
        int k = fields(rest, f);
        if (k < 0)
            return k;
        long long h = 0, m = 0, x = 0;
        if (dash) { /* D-H, D-H:M, D-H:M:S */
            h = f[0];
            m = k > 1 ? f[1] : 0;
            x = k > 2 ? f[2] : 0;
            if (h > 23)
                return -EINVAL;
        } else if (k == 2) { /* M:S */
            m = f[0];
            x = f[1];
            if (x > 59)
                return -EINVAL;
        } else if (k == 3) { /* H:M:S */
            h = f[0];
            m = f[1];
            x = f[2];
        } else {
            return -EINVAL;
        }
        if (x > 59 || ((dash || k == 3) && m > 59))
            return -EINVAL;
        v = (double)days * 86400 + (double)h * 3600 + (double)m * 60 + (double)x;
    }
    if (v > STRPARSE_DURATION_MAX)
        return -ERANGE;
    *out = v;
    return 0;
}

bool strparse_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return true;
    return false;
}

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (n == 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong three- and four-byte forms, surrogates, above U+10FFFF */
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    /* C1 controls (U+0080 to U+009F) are terminal commands too */
    if (p[0] == 0xc2 && p[1] < 0xa0)
        return 0;
    return n;
}

char *strparse_escape(const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    char *out = malloc(len * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n > 1 || (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\')) {
            memcpy(o, p, n);
            o += n;
            p += n;
            continue;
        }
        switch (*p) {
        case '\n': memcpy(o, "\\n", 2); o += 2; break;
        case '\t': memcpy(o, "\\t", 2); o += 2; break;
        case '\r': memcpy(o, "\\r", 2); o += 2; break;
        case '\\': memcpy(o, "\\\\", 2); o += 2; break;
        default: o += sprintf(o, "\\x%02x", *p); break;
        }
        p++;
    }
    *o = '\0';
    return out;
}

size_t strparse_utf8_cut(const char *s, size_t maxchars, size_t *chars)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t k = 0, n = 0;
    for (; p[k] && n < maxchars; n++) {
        size_t l = utf8_len(p + k);
        k += l ? l : 1;
    }
    if (chars)
        *chars = n;
    return k;
}

size_t strparse_utf8_chars(const char *s)
{
    size_t n;
    strparse_utf8_cut(s, (size_t)-1, &n);
    return n;
}

void strparse_utf8_fix(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (p && *p) {
        size_t l = utf8_len(p);
        if (l == 0 && *p >= 0xc2 && *p <= 0xdf && p[1] >= 0x80 && p[1] < 0xa0)
            l = 2; /* a C1 control: valid UTF-8, only unfit for terminals */
        if (l) {
            p += l;
            continue;
        }
        /* the lead byte of a sequence the end cut short: no other character follows */
        size_t want = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
                    : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
        size_t have = 1;
        while (have < want && (p[have] & 0xc0) == 0x80)
            have++;
        if (want && !p[have]) {
            *p = '\0';
            return;
        }
        *p++ = '?';
    }
}

void strparse_fmt_limit(double t, char *buf, size_t len)
{
    if (!(t > 0)) {
        snprintf(buf, len, "UNLIMITED");
        return;
    }
    long long x = (long long)(t + 0.5), d = x / 86400;
    if (d)
        snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", d, x % 86400 / 3600, x % 3600 / 60, x % 60);
    else
        snprintf(buf, len, "%lld:%02lld:%02lld", x / 3600, x % 3600 / 60, x % 60);
}
