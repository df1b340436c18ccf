#include "ckptfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

long ckptfiles_latest(const char *app_dir)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/latest", app_dir);
    FILE *f = fopen(p, "re");
    long v = 0;
    if (f && fscanf(f, "%ld", &v) != 1)
        v = 0;
    if (f)
        fclose(f);
    return v > 0 ? v : 0;
}

void ckptfiles_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char p[PATH_MAX + 256];
                snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(path);
}

int ckptfiles_fsync(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int publish_locked(const char *app_dir, const char *suffix, long version);

/* The library's commits and the agents' flushes (other processes, other hosts) publish
 * into one directory: the check of `latest` and its move are one step under a lock
 * (flock on app_dir/.lock; on a file system without it, the step alone). */
int ckptfiles_publish(const char *app_dir, const char *suffix, long version)
{
    char lock[PATH_MAX + 16];
    snprintf(lock, sizeof(lock), "%s/.lock", app_dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    while (fd >= 0 && flock(fd, LOCK_EX) < 0 && errno == EINTR)
        ;
    int rc = publish_locked(app_dir, suffix, version);
    if (fd >= 0)
        close(fd); /* and the lock with it */
    return rc;
}

static int publish_locked(const char *app_dir, const char *suffix, long version)
{
    char part[PATH_MAX + 32], final[PATH_MAX + 32];
    snprintf(part, sizeof(part), "%s/v%ld.%s", app_dir, version, suffix);
    snprintf(final, sizeof(final), "%s/v%ld", app_dir, version);
    ckptfiles_rmtree(final); /* a version of a run that never published it */
    int rc = rename(part, final) < 0 ? -errno : ckptfiles_fsync(app_dir);
    if (rc == 0 && ckptfiles_latest(app_dir) < version) {
        char tmp[PATH_MAX + 16], latest[PATH_MAX + 16];
        snprintf(tmp, sizeof(tmp), "%s/latest.tmp.%d.%ld", app_dir, (int)getpid(), version);
        snprintf(latest, sizeof(latest), "%s/latest", app_dir);
        FILE *f = fopen(tmp, "we");
        rc = f && fprintf(f, "%ld\n", version) > 0 && fflush(f) == 0 && fsync(fileno(f)) == 0
                 ? 0
                 : -EIO;
        if (f)
            fclose(f);
        if (rc == 0)
            rc = rename(tmp, latest) < 0 ? -errno : ckptfiles_fsync(app_dir);
        if (rc < 0)
            unlink(tmp);
    }
    if (rc < 0)
        return rc;
    long newest = ckptfiles_latest(app_dir);
    for (long old = newest - CKPTFILES_KEEP; old > 0 && old > newest - CKPTFILES_KEEP - 8; old--) {
        static const char *const forms[] = {"", "." CKPTFILES_PART, "." CKPTFILES_FLUSH};
        for (int k = 0; k < 3; k++) {
            snprintf(final, sizeof(final), "%s/v%ld%s", app_dir, old, forms[k]);
            ckptfiles_rmtree(final);
        }
    }
    return 0;
}
