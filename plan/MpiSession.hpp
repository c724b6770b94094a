/* dbosim — a plan sharded over MPI ranks (mpirun -np N dbosim plan ...): rank r evaluates points r, r+N, ...; rank 0
 * gathers every rank's results and writes the report. Without MPI (not built, or not launched by mpirun) it is one
 * rank of one. */
#pragma once
#include <string>
#include <vector>

namespace dbosim::plan {

class MpiSession {
public:
  /** @brief Initializes MPI when dbosim was built with it and this process was started by mpirun. */
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&)            = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /** @brief Ranks on this machine (to share its cores), 1 without MPI. */
  int local_size() const { return local_size_; }
  bool active() const { return active_; }
  /** @brief Every rank's `mine`, in rank order, on rank 0; empty elsewhere. A collective: every rank calls it. */
  std::vector<std::string> gather(const std::string& mine) const;
  /** @brief True when dbosim was built with MPI. */
  static bool built_with_mpi();

private:
  int rank_ = 0, size_ = 1, local_size_ = 1;
  bool active_ = false;
};

} // namespace dbosim::plan
