/* The file level of application checkpoints (libductile's dt_ckpt_*, the checkpoint
 * agents' flush, `ductile checkpoints`): what all of them need to agree on.
 * docs/checkpointing.md has the layout. */
#ifndef DUCTILE_CKPTFILES_H
#define DUCTILE_CKPTFILES_H

/* Complete versions kept: the last and the one before. */
#define CKPTFILES_KEEP 2

/* The last complete version in an application's checkpoint directory (its `latest`
 * file), or 0 when there is none. */
long ckptfiles_latest(const char *app_dir);

/* Removes a directory of plain files (a version, or what a killed commit left). */
void ckptfiles_rmtree(const char *path);
int ckptfiles_fsync(const char *path);

/* Where a version is written before it is published: "part" for the library's own
 * commits (a restart removes what a killed run left), "flush" for an agent's (a restart
 * leaves it alone: the agent may be writing it). */
#define CKPTFILES_PART "part"
#define CKPTFILES_FLUSH "flush"

/* Makes app_dir/v<version>.<suffix>, whose node files and manifest.json are written and
 * synced, the complete version: renamed to v<version>, then `latest` moved to it (never
 * backwards: a version published later by another writer stays the latest), then the
 * versions older than the kept ones removed, with what unfinished writes of them left.
 * 0 or a negative errno. Two threads of one process must not run it at once. */
int ckptfiles_publish(const char *app_dir, const char *suffix, long version);

#endif
