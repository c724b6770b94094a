#include "sim/SimConfig.hpp"

namespace dbosim::sim {

std::vector<std::string> engine_args(const std::string& program, const std::vector<std::string>& extra)
{
  std::vector<std::string> args{program,
                                "--cfg=network/model:CM02",
                                "--cfg=network/TCP-gamma:0",
                                "--cfg=network/crosstraffic:0",
                                "--log=xbt_cfg.thres:warning",
                                "--log=root.thres:warning"};
#ifdef DBOSIM_SANITIZE
  // SimGrid's raw contexts switch stacks by hand, which ASan cannot follow; real threads are clean.
  args.emplace_back("--cfg=contexts/factory:thread");
#endif
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

} // namespace dbosim::sim
