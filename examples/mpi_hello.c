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

int main(int argc, char **argv)
{
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
