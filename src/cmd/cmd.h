/* The `ductile` command: one entry per subcommand. */
#ifndef DUCTILE_CMD_H
#define DUCTILE_CMD_H

int cmd_sim(int argc, char **argv);

/* Prints "ductile: <message>" on stderr; returns the exit code to use (1). */
int cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
