#include "plan/MpiSession.hpp"

#include "config/InputError.hpp"

#include <cstdlib>

#ifdef DBOSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace dbosim::plan {
namespace {
bool launched_by_mpirun()
{
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}
} // namespace

bool MpiSession::built_with_mpi()
{
#ifdef DBOSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession()
{
  if (!launched_by_mpirun())
    return;
#ifdef DBOSIM_HAVE_MPI
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  active_ = true;
#else
  if (std::getenv("OMPI_COMM_WORLD_SIZE") && std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")) > 1)
    throw InputError("mpirun", "this dbosim was built without MPI (install libopenmpi-dev: scripts/setup.sh, then "
                               "rebuild); run dbosim plan without mpirun");
#endif
}

MpiSession::~MpiSession()
{
#ifdef DBOSIM_HAVE_MPI
  if (active_)
    MPI_Finalize();
#endif
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const
{
  if (!active_)
    return {mine};
#ifdef DBOSIM_HAVE_MPI
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<std::size_t>(r)] = total;
      total += lens[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
#else
  return {mine};
#endif
}

} // namespace dbosim::plan
