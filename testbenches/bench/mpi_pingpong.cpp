// The MPI exchange a window costs, alone (docs/performance.md "MPI ranks"): rank 0 sends rank 1
// a message of B bytes and waits for one of B bytes back, as in a window's start and join.
//
//   mpirun --oversubscribe -np 2 build/testbenches/bench/mpi_pingpong [BYTES ...]
//
// Prints, per size, the median round trip of 2,000 after 200 warm-up ones (microseconds).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atol(argv[i]));
  if (sizes.empty()) sizes = {64, 1024, 8192, 65536, 262144};
  for (const long bytes : sizes) {
    std::vector<char> buf(static_cast<size_t>(bytes));
    std::vector<double> us;
    for (int i = 0; i < 2200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (rank == 0) {
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (i >= 200)
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(us.begin(), us.end());
    if (rank == 0)
      std::printf("%8ld bytes: round trip median %.1f us, p90 %.1f us\n", bytes, us[us.size() / 2],
                  us[us.size() * 9 / 10]);
  }
  MPI_Finalize();
  return 0;
}
