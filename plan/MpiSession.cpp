#include "plan/MpiSession.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#ifdef DBOSIM_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace dbosim::plan {
namespace {
#ifdef DBOSIM_HAVE_MPI
/* SimGrid (linked into dbosim) exports its own MPI_* functions (SMPI), which would shadow OpenMPI's. So OpenMPI is
 * not linked: its library is opened with RTLD_DEEPBIND (it binds to its own symbols) and every call goes through a
 * pointer looked up in it. MPI_COMM_WORLD, MPI_INT... are OpenMPI globals (ompi_mpi_*), looked up the same way. */
struct OpenMpi {
  void* lib = nullptr;
  decltype(&MPI_Init) init;
  decltype(&MPI_Finalize) finalize;
  decltype(&MPI_Comm_rank) comm_rank;
  decltype(&MPI_Comm_size) comm_size;
  decltype(&MPI_Comm_split_type) comm_split_type;
  decltype(&MPI_Comm_free) comm_free;
  decltype(&MPI_Gather) gather;
  decltype(&MPI_Send) send;
  decltype(&MPI_Recv) recv;
  MPI_Comm world;
  MPI_Datatype long_long_type, char_type;
  MPI_Info info_null;

  template <typename T> void sym(T& out, const char* name)
  {
    void* p = dlsym(lib, name);
    if (!p)
      throw InternalError(fmt::format("dbosim plan: {} not found in {}", name, DBOSIM_MPI_LIBRARY));
    out = reinterpret_cast<T>(p);
  }
  OpenMpi()
  {
    lib = dlopen(DBOSIM_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL | RTLD_DEEPBIND);
    if (!lib)
      throw InternalError(fmt::format("dbosim plan: cannot open {}: {}", DBOSIM_MPI_LIBRARY, dlerror()));
    sym(init, "MPI_Init");
    sym(finalize, "MPI_Finalize");
    sym(comm_rank, "MPI_Comm_rank");
    sym(comm_size, "MPI_Comm_size");
    sym(comm_split_type, "MPI_Comm_split_type");
    sym(comm_free, "MPI_Comm_free");
    sym(gather, "MPI_Gather");
    sym(send, "MPI_Send");
    sym(recv, "MPI_Recv");
    sym(world, "ompi_mpi_comm_world");
    sym(long_long_type, "ompi_mpi_long_long_int");
    sym(char_type, "ompi_mpi_char");
    sym(info_null, "ompi_mpi_info_null");
  }
};

OpenMpi& openmpi()
{
  static OpenMpi m;
  return m;
}
#endif

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
  OpenMpi& m = openmpi();
  m.init(nullptr, nullptr);
  m.comm_rank(m.world, &rank_);
  m.comm_size(m.world, &size_);
  MPI_Comm local;
  m.comm_split_type(m.world, MPI_COMM_TYPE_SHARED, rank_, m.info_null, &local);
  m.comm_size(local, &local_size_);
  m.comm_free(&local);
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
    openmpi().finalize();
#endif
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const
{
  if (!active_)
    return {mine};
#ifdef DBOSIM_HAVE_MPI
  // Lengths in 64 bits, then each rank's text to rank 0 in messages of at most 1 GiB (an MPI count is an int: one
  // Gatherv of every rank's text would overflow past 2 GiB in all, ~4 KB a point for 10^5+ points).
  constexpr std::size_t max_message = std::size_t{1} << 30;
  OpenMpi& m                        = openmpi();
  long long len                     = static_cast<long long>(mine.size());
  std::vector<long long> lens(static_cast<std::size_t>(size_));
  m.gather(&len, 1, m.long_long_type, lens.data(), 1, m.long_long_type, 0, m.world);
  std::vector<std::string> out;
  if (rank_ != 0) {
    for (std::size_t at = 0; at < mine.size(); at += max_message)
      m.send(mine.data() + at, static_cast<int>(std::min(max_message, mine.size() - at)), m.char_type, 0, 0, m.world);
    return out;
  }
  out.push_back(mine);
  for (int r = 1; r < size_; ++r) {
    std::string text(static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]), '\0');
    for (std::size_t at = 0; at < text.size(); at += max_message)
      m.recv(text.data() + at, static_cast<int>(std::min(max_message, text.size() - at)), m.char_type, r, 0, m.world,
             MPI_STATUS_IGNORE);
    out.push_back(std::move(text));
  }
  return out;
#else
  return {mine};
#endif
}

} // namespace dbosim::plan
