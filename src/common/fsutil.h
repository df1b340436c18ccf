/* Small file-system helpers shared by the daemons and libductile. */
#ifndef DUCTILE_FSUTIL_H
#define DUCTILE_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: every missing directory of path, with mode; 0 or a negative errno. */
int fsutil_mkdirs(const char *path, mode_t mode);

#endif
