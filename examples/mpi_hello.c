/* mpi_hello: a plain (rigid) MPI program, for `mpirun` inside a job.
 *
 *   mpirun ./mpi_hello
 *
 * Every rank prints where it runs: "rank R of N on NODE", NODE being the Ductile node
 * ($DUCTILE_NODENAME; the host name outside Ductile). Then the ranks add up their
 * numbers and rank 0 prints "sum of ranks S", so a run that prints it had working
 * communication between all of them. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
        if (!help)
            fprintf(stderr, "mpi_hello: unknown option '%s'\n", argv[i]);
        fprintf(help ? stdout : stderr,
                "usage: mpi_hello\n"
                "A plain MPI program (no libductile): every rank prints where it runs, then\n"
                "rank 0 the sum of the ranks. Run it with `mpirun ./mpi_hello` (inside a job:\n"
                "one rank per node of the job), or alone.\n");
        return help ? 0 : 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[MPI_MAX_PROCESSOR_NAME];
    const char *node = getenv("DUCTILE_NODENAME");
    if (!node) {
        MPI_Get_processor_name(host, &len);
        node = host;
    }
    printf("rank %d of %d on %s\n", rank, size, node);
    fflush(stdout);
    long mine = rank, sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sum of ranks %ld\n", sum);
    MPI_Finalize();
    return 0;
}
