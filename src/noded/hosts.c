/* A job's host files, on the batch node's own disk (this daemon's spool; on a real
 * cluster only home directories are shared, and the spool is not):
 *
 *   job<N>.hosts       $DUCTILE_HOSTFILE: one node name a line, for any launcher
 *   job<N>.hosts.ompi  Open MPI's default host file: "NAME slots=1" a line
 *
 * With Open MPI's remote-shell launcher set to `ductile rsh`, the second lets a plain
 * `mpirun ./app` in the batch script start one rank on every node of the job. Both are
 * written when the script starts, rewritten when the controller commits a resize of
 * the job (job_resized), and removed with the job. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostlist.h"
#include "noded.h"

void hosts_path(const noded_t *d, int64_t job, bool ompi, char *out, size_t len)
{
    snprintf(out, len, "%s/job%lld.hosts%s", d->spool, (long long)job, ompi ? ".ompi" : "");
}

/* Writes one file whole, then puts it in place: a reader sees the old or the new list. */
static int write_file(const char *path, char *const *names, int n, const char *suffix,
                      char *err, size_t errlen)
{
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    FILE *f = NULL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && fchmod(fd, 0644) == 0)
        f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return -EIO;
    }
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s\n", names[i], suffix);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        unlink(tmp);
        return -EIO;
    }
    return 0;
}

int hosts_write(noded_t *d, int64_t job, const char *nodelist, char *err, size_t errlen)
{
    char **names;
    int n;
    int rc = hostlist_expand(nodelist ? nodelist : "", &names, &n, err, errlen);
    if (rc < 0)
        return rc;
    char path[PATH_MAX];
    hosts_path(d, job, false, path, sizeof(path));
    rc = write_file(path, names, n, "", err, errlen);
    hosts_path(d, job, true, path, sizeof(path));
    if (rc == 0)
        rc = write_file(path, names, n, " slots=1", err, errlen);
    hostlist_free(names, n);
    return rc;
}

void hosts_remove(noded_t *d, int64_t job)
{
    char path[PATH_MAX];
    hosts_path(d, job, false, path, sizeof(path));
    unlink(path);
    hosts_path(d, job, true, path, sizeof(path));
    unlink(path);
}

const char *hosts_env_get(char *const *env, const char *key)
{
    size_t k = strlen(key);
    for (; env && *env; env++)
        if (!strncmp(*env, key, k) && (*env)[k] == '=')
            return *env + k + 1;
    return NULL;
}

/* `ductile rsh`, by the path of the ductile installed next to this daemon if there is
 * one (a job's PATH need not have it), else by name. */
static void rsh_agent(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char cand[PATH_MAX + 16];
        snprintf(cand, sizeof(cand), "%s/ductile", dirname(self));
        if (access(cand, X_OK) == 0 && !strchr(cand, ' ')) {
            snprintf(out, len, "%s rsh", cand);
            return;
        }
    }
    snprintf(out, len, "ductile rsh");
}

int hosts_env(const noded_t *d, int64_t job, char *const *base, char kv[][HOSTS_KV_LEN])
{
    char hosts[PATH_MAX], ompi[PATH_MAX], agent[PATH_MAX + 16];
    hosts_path(d, job, false, hosts, sizeof(hosts));
    hosts_path(d, job, true, ompi, sizeof(ompi));
    rsh_agent(agent, sizeof(agent));
    int n = 0;
    snprintf(kv[n++], HOSTS_KV_LEN, "DUCTILE_HOSTFILE=%s", hosts);
    /* What the user exported at submission wins, except what Ductile itself set in the
     * job the submission came from (that job's host file, gone with it). */
    const char *their = hosts_env_get(base, "OMPI_MCA_orte_default_hostfile");
    const char *outer = hosts_env_get(base, "DUCTILE_HOSTFILE");
    char outer_ompi[PATH_MAX + 8];
    snprintf(outer_ompi, sizeof(outer_ompi), "%s.ompi", outer ? outer : "");
    if (!their || (outer && !strcmp(their, outer_ompi)))
        snprintf(kv[n++], HOSTS_KV_LEN, "OMPI_MCA_orte_default_hostfile=%s", ompi);
    if (!hosts_env_get(base, "OMPI_MCA_plm_rsh_agent"))
        snprintf(kv[n++], HOSTS_KV_LEN, "OMPI_MCA_plm_rsh_agent=%s", agent);
    /* Open MPI's daemons, started under a node daemon, now and then crash sharing their
     * hwloc topology through a shared memory "hole" (hwloc_shmem_topology_write): off,
     * as `ductile mpirun` has it */
    if (!hosts_env_get(base, "OMPI_MCA_rtc_hwloc_vmhole"))
        snprintf(kv[n++], HOSTS_KV_LEN, "OMPI_MCA_rtc_hwloc_vmhole=none");
    return n;
}

/* A resize the controller committed: the job's nodes from now on. */
void hosts_on_resized(noded_t *d, const json_t *msg)
{
    char err[256];
    int64_t id, run;
    const char *nl;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0 ||
        proto_str(msg, "nodelist", 1 << 20, &nl, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded %s: bad job_resized: %s\n", d->name, err);
        return;
    }
    njob_t *j = idmap_get(d->jobs, id);
    if (!j || !j->batch || j->run != run || j->cleaning)
        return; /* not the batch node of that run, or the job is ending */
    if (hosts_write(d, id, nl, err, sizeof(err)) < 0)
        fprintf(stderr, "ductile-noded %s: job %lld: host file not updated: %s\n", d->name,
                (long long)id, err);
}
