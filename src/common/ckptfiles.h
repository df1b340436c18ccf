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

/* Makes app_dir/v<version>.part, whose node files and manifest.json are written and
 * synced, the complete version: renamed to v<version>, then `latest` moved to it (never
 * backwards: a version published later by another writer stays the latest), then the
 * versions older than the kept ones removed. 0 or a negative errno. */
int ckptfiles_publish(const char *app_dir, long version);

#endif
