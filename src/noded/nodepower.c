/* nodepower: the node's draw for each heartbeat, from RAPL or from the model
 * (nodepower.h; docs/power.md). */
#include "nodepower.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_u64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    unsigned long long v;
    int n = fscanf(f, "%llu", &v);
    fclose(f);
    if (n != 1)
        return -EIO;
    *out = v;
    return 0;
}

/* A package is intel-rapl:N (one colon); intel-rapl:N:M are its parts (cores, DRAM),
 * already inside the package's count. */
static bool package_zone(const char *name)
{
    const char *c = strchr(name, ':');
    return !strncmp(name, "intel-rapl:", 11) && c && c[1] && !strchr(c + 1, ':');
}

static int zone_cmp(const void *a, const void *b) { return strcmp(a, b); }

static int find_zones(nodepower_t *p, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(p->why, sizeof(p->why), "no RAPL counters: %s: %s", dir, strerror(errno));
        return -ENOENT;
    }
    struct dirent *e;
    while ((e = readdir(d)) && p->nzones < NODEPOWER_ZONES) {
        if (!package_zone(e->d_name))
            continue;
        char path[300];
        int l = snprintf(path, sizeof(path), "%s/%s/energy_uj", dir, e->d_name);
        uint64_t v;
        if (l >= (int)sizeof(path) || read_u64(path, &v) < 0) {
            /* the counters are root's only since Linux 5.10 (CVE-2020-8694) */
            snprintf(p->why, sizeof(p->why), "RAPL counter %s is not readable", path);
            continue;
        }
        memcpy(p->zone[p->nzones++], path, (size_t)l + 1);
    }
    closedir(d);
    if (p->nzones == 0) {
        if (!p->why[0])
            snprintf(p->why, sizeof(p->why), "no RAPL package under %s", dir);
        return -ENOENT;
    }
    /* a fixed order: readdir's is not */
    qsort(p->zone, (size_t)p->nzones, sizeof(p->zone[0]), zone_cmp);
    for (int i = 0; i < p->nzones; i++) {
        char range[320];
        snprintf(range, sizeof(range), "%.*s/max_energy_range_uj",
                 (int)(strlen(p->zone[i]) - strlen("/energy_uj")), p->zone[i]);
        p->range[i] = 0;
        read_u64(range, &p->range[i]);
    }
    p->why[0] = '\0';
    return 0;
}

int nodepower_init(nodepower_t *p, config_power_source_t source, const char *dir)
{
    *p = (nodepower_t){.source = source};
    if (source != CONFIG_POWER_RAPL && source != CONFIG_POWER_AUTO)
        return 0;
    int rc = find_zones(p, dir);
    if (rc == 0) {
        p->source = CONFIG_POWER_RAPL;
        return 0;
    }
    if (source == CONFIG_POWER_RAPL)
        return rc;
    p->source = CONFIG_POWER_MODEL; /* auto: p->why says why */
    return 0;
}

int nodepower_rapl(nodepower_t *p, double now, double *watts)
{
    uint64_t v[NODEPOWER_ZONES];
    for (int i = 0; i < p->nzones; i++)
        if (read_u64(p->zone[i], &v[i]) < 0) {
            snprintf(p->why, sizeof(p->why), "cannot read %s", p->zone[i]);
            p->last_t = 0;
            return -EIO;
        }
    double dt = now - p->last_t, uj = 0;
    bool first = p->last_t <= 0 || dt <= 0;
    for (int i = 0; i < p->nzones; i++) {
        /* a counter below its last value wrapped (at its range, or at 2^32 uJ where
         * the range is unknown) */
        uint64_t d = v[i] >= p->last[i] ? v[i] - p->last[i]
                                        : (p->range[i] ? p->range[i] : UINT32_MAX) - p->last[i] + v[i];
        uj += (double)d;
        p->last[i] = v[i];
    }
    p->last_t = now;
    if (first)
        return -EAGAIN;
    *watts = uj / 1e6 / dt;
    return 0;
}

double nodepower_model(double idle, bool has_job, double pmin, double pmax, double cpu_share)
{
    if (!has_job)
        return idle;
    if (pmax < pmin)
        pmax = pmin;
    if (cpu_share < 0 || cpu_share > 1)
        cpu_share = 1;
    return pmin + cpu_share * (pmax - pmin);
}

static int cpu_stat_usage(const char *path, uint64_t *usec)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char key[64];
    unsigned long long v;
    int rc = -EIO;
    while (fscanf(f, "%63s %llu", key, &v) == 2)
        if (!strcmp(key, "usage_usec")) {
            *usec = v;
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

/* The sum of one counter over the job's cgroups under parent (prefix job_12: job_12 and
 * job_12_<tag>, never job_123), read from each one's `file` by `read`; -ENOENT when
 * no cgroup has it. */
static int cgroup_sum(const char *parent, const char *prefix, const char *file,
                      int (*read)(const char *path, uint64_t *v), uint64_t *out)
{
    DIR *d = opendir(parent);
    if (!d)
        return -ENOENT;
    size_t pl = strlen(prefix);
    uint64_t sum = 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, pl) || (e->d_name[pl] && e->d_name[pl] != '_'))
            continue;
        char path[4400];
        uint64_t u;
        snprintf(path, sizeof(path), "%s/%s/%s", parent, e->d_name, file);
        if (read(path, &u) == 0) {
            sum += u;
            found++;
        }
    }
    closedir(d);
    *out = sum;
    return found ? 0 : -ENOENT;
}

int nodepower_cgroup_usage(const char *parent, const char *prefix, uint64_t *usec)
{
    return cgroup_sum(parent, prefix, "cpu.stat", cpu_stat_usage, usec);
}

int nodepower_io_pressure_parse(const char *text, uint64_t *some_usec)
{
    if (!text)
        return -EINVAL;
    for (const char *l = text; *l;) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        if (len > 5 && !strncmp(l, "some ", 5)) {
            /* the total=N field of this line, digits only, up to a space or its end */
            const char *t = NULL;
            for (const char *p = l; p + 6 <= l + len; p++)
                if (!strncmp(p, "total=", 6) && (p == l || p[-1] == ' ')) {
                    t = p + 6;
                    break;
                }
            if (!t)
                return -EINVAL;
            uint64_t v = 0;
            int nd = 0;
            for (; t < l + len && *t >= '0' && *t <= '9'; t++, nd++) {
                if (nd >= 19) /* beyond 10^19 us: not a counter */
                    return -EINVAL;
                v = v * 10 + (uint64_t)(*t - '0');
            }
            if (nd == 0 || (t < l + len && *t != ' ' && *t != '\r'))
                return -EINVAL;
            *some_usec = v;
            return 0;
        }
        l += len;
        if (*l == '\n')
            l++;
    }
    return -EINVAL;
}

static int io_pressure_file(const char *path, uint64_t *usec)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return nodepower_io_pressure_parse(buf, usec);
}

int nodepower_cgroup_io_stall(const char *parent, const char *prefix, uint64_t *usec)
{
    return cgroup_sum(parent, prefix, "io.pressure", io_pressure_file, usec);
}

double nodepower_io_share(uint64_t prev, uint64_t cur, double dt)
{
    if (!(dt > 0) || cur < prev)
        return -1;
    double s = (double)(cur - prev) / 1e6 / dt;
    return s > 1 ? 1 : s;
}
