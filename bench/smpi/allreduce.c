/* One MPI_Allreduce of SIZE bytes of floats, timed in simulated time: the SMPI side of bench/smpi_vs_sim.sh.
 * Buffers come from SMPI_SHARED_MALLOC, so 64 ranks x 64 MiB fold into one allocation; the reduction still
 * runs on them (SMPI executes the real collective code), which is part of SMPI's wall time.
 * Usage (under smpirun): allreduce SIZE_BYTES */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long bytes = argc > 1 ? atol(argv[1]) : 64L << 20;
  const int count = (int)(bytes / sizeof(float));
  float* in = SMPI_SHARED_MALLOC(count * sizeof(float));
  float* out = SMPI_SHARED_MALLOC(count * sizeof(float));
  const double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - start;
  double slowest = 0;
  /* The collective's time is the last rank's: reduce the per-rank times (after the measured region). */
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("smpi allreduce %ld bytes: %.3f us\n", bytes, slowest * 1e6);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
