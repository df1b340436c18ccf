#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int cu_load_conf(const char *conf, config_t *cfg)
{
    if (!conf)
        conf = getenv("DUCTILE_CONF");
    if (!conf || !*conf)
        return cmd_fail("no cluster: give --conf FILE or set DUCTILE_CONF "
                        "(ductile cluster up starts a local one)");
    char err[1024];
    if (config_load(conf, cfg, err, sizeof(err)) < 0)
        return cmd_fail("%s", err);
    return 0;
}

json_t *cu_call(const config_t *cfg, json_t *req)
{
    char err[1024];
    client_t *c = NULL;
    int rc = client_open_unix(cfg->control_socket, &c, err, sizeof(err));
    if (rc < 0 && cfg->auth_type == CONFIG_AUTH_MUNGE)
        rc = client_open_tcp(cfg->control_addr, cfg->control_port, NULL, cfg->munge_socket, &c,
                             err, sizeof(err));
    json_t *reply = NULL;
    if (rc == 0)
        rc = client_call(c, req, &reply, 60, err, sizeof(err));
    client_close(c);
    json_decref(req);
    if (rc < 0) {
        cmd_fail("%s", err);
        return NULL;
    }
    return reply;
}

void cu_fmt_duration(double secs, char *buf, size_t len)
{
    long s = secs > 0 ? (long)floor(secs + 0.5) : 0;
    long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, x = s % 60;
    if (d)
        snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", d, h, m, x);
    else if (h)
        snprintf(buf, len, "%ld:%02ld:%02ld", h, m, x);
    else
        snprintf(buf, len, "%ld:%02ld", m, x);
}

int cu_parse_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && !errno && v >= 0) {
        if (!*end) {
            *out = v * 60; /* plain number: minutes, as in Slurm */
            return 0;
        }
        if (end[1] == '\0') {
            double mul = end[0] == 's' ? 1 : end[0] == 'm' ? 60 : end[0] == 'h' ? 3600
                       : end[0] == 'd' ? 86400 : -1;
            if (mul > 0) {
                *out = v * mul;
                return 0;
            }
        }
    }
    long d = 0, h = 0, m = 0, x = 0;
    char tail;
    if (sscanf(s, "%ld-%ld:%ld:%ld%c", &d, &h, &m, &x, &tail) == 4 ||
        (d = 0, sscanf(s, "%ld:%ld:%ld%c", &h, &m, &x, &tail) == 3) ||
        (h = 0, sscanf(s, "%ld:%ld%c", &m, &x, &tail) == 2)) {
        if (d < 0 || h < 0 || m < 0 || x < 0 || m > 59 || x > 59)
            return -1;
        *out = (double)(((d * 24 + h) * 60 + m) * 60 + x);
        return 0;
    }
    return -1;
}

void cu_table(const char *const *hdr, char ***rows, int nrows, int ncols)
{
    int w[16] = {0};
    for (int c = 0; c < ncols && c < 16; c++) {
        w[c] = (int)strlen(hdr[c]);
        for (int r = 0; r < nrows; r++)
            if ((int)strlen(rows[r][c]) > w[c])
                w[c] = (int)strlen(rows[r][c]);
    }
    for (int c = 0; c < ncols; c++) {
        if (c + 1 < ncols)
            printf("%-*s  ", w[c], hdr[c]);
        else
            printf("%s\n", hdr[c]);
    }
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < ncols; c++) {
            if (c + 1 < ncols)
                printf("%-*s  ", w[c], rows[r][c]);
            else
                printf("%s\n", rows[r][c]);
        }
}

void cu_print_json(const json_t *v)
{
    json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', stdout);
}

const char *cu_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double cu_num(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }
