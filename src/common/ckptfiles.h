/* The file level of application checkpoints (libductile's dt_ckpt_*, read by `ductile
 * checkpoints`): what both sides need to agree on. docs/checkpointing.md has the layout. */
#ifndef DUCTILE_CKPTFILES_H
#define DUCTILE_CKPTFILES_H

/* The last complete version in an application's checkpoint directory (its `latest`
 * file), or 0 when there is none. */
long ckptfiles_latest(const char *app_dir);

#endif
