/* A durable record of the runs on this node (one small file per job in the spool),
 * so that a node daemon killed -9 or restarted finds what its earlier incarnation
 * left: it reports those runs when it registers and the controller decides (adopt a
 * run it still assigns to this node, end anything else) before the node takes new
 * work. Processes in our cgroups that no record names are ended at start-up. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded.h"

static void record_path(const noded_t *d, int64_t id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/run.%lld", d->spool, (long long)id);
}

/* This boot of the host: a record from another boot names processes that are gone
 * (and pids that may now be someone else's). */
void runs_boot_id(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (f && fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = '\0';
    if (f)
        fclose(f);
}

int runs_record(noded_t *d, const njob_t *j)
{
    char path[4300], tmp[4400];
    record_path(d, j->id, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    /* a start not exec'd yet is recorded too: a daemon killed meanwhile leaves it */
    const char *cg = j->proc       ? launch_cgroup(j->proc)
                     : j->starting ? launch_pending_cgroup(j->starting)
                                   : NULL;
    pid_t pid = j->proc ? launch_pid(j->proc) : j->starting ? launch_pending_pid(j->starting) : 0;
    pid_t pgid = j->proc ? launch_pgid(j->proc) : pid;
    char boot[64];
    runs_boot_id(boot, sizeof(boot));
    json_t *r = json_pack("{s:I,s:i,s:b,s:I,s:I,s:I,s:f,s:f,s:b,s:s,s:s*}",
                          "job", (json_int_t)j->id,
                          "run", j->run,
                          "batch", j->batch,
                          "uid", (json_int_t)j->uid,
                          "pid", (json_int_t)pid,
                          "pgid", (json_int_t)pgid,
                          "deadline", j->deadline,
                          "began", j->began,
                          "requeue", j->requeue,
                          "boot", boot,
                          "cgroup", cg);
    if (r && launch_shepherded(j->proc))
        json_object_set_new(r, "shepherd", json_true());
    if (r && j->warn_sig) /* submit --signal, kept for a daemon that adopts the job */
        json_object_set_new(r, "warn", json_pack("[i,f,i,b]", j->warn_sig, j->warn_secs,
                                                 j->warn_scope, j->warned));
    /* Written whole then renamed: a daemon killed mid-write leaves the old record or
     * the new one, never half of one. */
    int rc = r && json_dump_file(r, tmp, JSON_COMPACT) == 0 && rename(tmp, path) == 0 ? 0 : -EIO;
    if (rc < 0) {
        fprintf(stderr, "ductile-noded %s: cannot record job %lld in %s: %s\n", d->name,
                (long long)j->id, path, strerror(errno));
        unlink(tmp);
    }
    json_decref(r);
    return rc;
}

static void status_path(const noded_t *d, int64_t id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/status.%lld", d->spool, (long long)id);
}

int runs_status_open(noded_t *d, int64_t id)
{
    char path[4300];
    status_path(d, id, path, sizeof(path));
    return runs_status_file_open(path);
}

int runs_status_file_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    /* The status is written over these blanks: on a disk that is full by the time
     * the job ends, overwriting needs no new block. */
    static const char blank[] = "                              \n";
    if (fd >= 0 && write(fd, blank, sizeof(blank) - 1) != (ssize_t)sizeof(blank) - 1) {
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

int runs_status_read(noded_t *d, int64_t id, int *status)
{
    char path[4300];
    status_path(d, id, path, sizeof(path));
    return runs_status_file_read(path, status);
}

int runs_status_file_read(const char *path, int *status)
{
    FILE *f = fopen(path, "re");
    int ok = f && fscanf(f, "%d", status) == 1;
    if (f)
        fclose(f);
    return ok ? 0 : -ENOENT;
}

void runs_forget(noded_t *d, int64_t id)
{
    char path[4300];
    record_path(d, id, path, sizeof(path));
    unlink(path);
    status_path(d, id, path, sizeof(path));
    unlink(path);
}

/* Is anything of the run still alive? Its cgroup's processes, or (a run tracked
 * without a cgroup) its session's. A record that named a cgroup that is gone is over:
 * never look for its pids elsewhere, they may be someone else's by now. */
launch_proc_t *runs_still_alive(const char *cgroup, pid_t pid, pid_t pgid)
{
    if (cgroup && access(cgroup, F_OK) < 0)
        return NULL;
    if (!cgroup && pgid <= 0)
        return NULL;
    launch_proc_t *p = launch_adopt(cgroup, pid, pgid);
    if (p && launch_all_gone(p)) {
        launch_cleanup(p); /* removes the empty cgroup */
        return NULL;
    }
    return p;
}

static void recover_one(noded_t *d, const char *path)
{
    json_error_t jerr;
    json_t *r = json_load_file(path, 0, &jerr);
    json_int_t id = 0, uid = 0, pid = 0, pgid = 0;
    int run = 0, batch = 0;
    double deadline = 0;
    const char *cg = NULL, *boot = NULL;
    char now_boot[64];
    runs_boot_id(now_boot, sizeof(now_boot));
    if (!r || json_unpack(r, "{s:I,s:i,s:b,s:I,s:I,s:I,s?F,s?s,s?s}", "job", &id, "run", &run,
                          "batch", &batch, "uid", &uid, "pid", &pid, "pgid", &pgid, "deadline",
                          &deadline, "boot", &boot, "cgroup", &cg) < 0 ||
        id <= 0) {
        fprintf(stderr, "ductile-noded %s: ignoring unreadable run record %s\n", d->name, path);
        json_decref(r);
        unlink(path);
        return;
    }
    /* from an earlier boot: nothing of it runs, whatever its pids name now */
    bool other_boot = boot && now_boot[0] && strcmp(boot, now_boot);
    launch_proc_t *p = other_boot ? NULL : runs_still_alive(cg, (pid_t)pid, (pid_t)pgid);
    fprintf(stderr, "ductile-noded %s: found run %d of job %lld from an earlier start: %s\n",
            d->name, run, (long long)id, p ? "still running" : "ended meanwhile");
    /* A job's other node has no process of its own between steps: it is adopted as
     * it is, and the controller says whether the job still holds the node. */
    jobs_adopt(d, id, run, batch, (uid_t)uid, deadline, p);
    njob_t *j = jobs_find(d, id);
    if (j) /* older records have none: not requeueable */
        j->requeue = json_is_true(json_object_get(r, "requeue"));
    if (j && j->proc) { /* its start time (ductile update) and --signal warning */
        launch_set_shepherded(j->proc, json_is_true(json_object_get(r, "shepherd")));
        j->began = json_number_value(json_object_get(r, "began"));
        json_t *w = json_object_get(r, "warn");
        int sig = (int)json_integer_value(json_array_get(w, 0));
        double secs = json_number_value(json_array_get(w, 1));
        int scope = (int)json_integer_value(json_array_get(w, 2));
        if (sig > 0 && sig <= 64 && secs >= 0 && scope >= 0 && scope <= 2) {
            j->warn_sig = sig;
            j->warn_secs = secs;
            j->warn_scope = scope;
            j->warned = json_is_true(json_array_get(w, 3));
            jobs_arm_limit(d, j);
        }
    }
    json_decref(r);
}

/* Processes in a cgroup of ours that no record names (a daemon killed between the
 * start of a job and its record, the tasks of steps whose streams died with it). */
static void end_unrecorded(noded_t *d)
{
    char root[256], dir[4400];
    if (!d->cgroup_parent[0] || launch_cgroup_root(root, sizeof(root)) < 0)
        return;
    snprintf(dir, sizeof(dir), "%s/%s", root, d->cgroup_parent);
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        long long id;
        char tag[64] = "";
        if (sscanf(e->d_name, "job_%lld_%63s", &id, tag) < 1)
            continue;
        njob_t *j = jobs_find(d, id);
        if (j && j->proc && launch_cgroup(j->proc) &&
            !strcmp(strrchr(launch_cgroup(j->proc), '/') + 1, e->d_name))
            continue; /* an adopted run's own cgroup */
        if (steps_owns_cgroup(d, e->d_name))
            continue; /* a step's task taken up again */
        char cg[4700];
        snprintf(cg, sizeof(cg), "%s/%s", dir, e->d_name);
        launch_proc_t *p = launch_adopt(cg, 0, 0);
        if (p && !launch_all_gone(p))
            fprintf(stderr, "ductile-noded %s: ending leftover processes in %s\n", d->name, cg);
        launch_cleanup(p); /* SIGKILL what is left, remove the cgroup */
    }
    closedir(dp);
}

void runs_recover(noded_t *d)
{
    DIR *dp = opendir(d->spool);
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp))) {
            size_t n = strlen(e->d_name);
            if (strncmp(e->d_name, "run.", 4))
                continue;
            char path[4400];
            snprintf(path, sizeof(path), "%s/%s", d->spool, e->d_name);
            if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp"))
                unlink(path); /* a write cut short by a kill: the record before it stands */
            else
                recover_one(d, path);
        }
        closedir(dp);
    }
    steps_recover(d); /* the tasks of those jobs' steps */
    end_unrecorded(d);
}
