/* bench_sim prio: the cost of the priority computation in a pass (bench_prio.c). */
#ifndef DUCTILE_BENCH_PRIO_H
#define DUCTILE_BENCH_PRIO_H

int bench_prio(int argc, char **argv);

#endif
