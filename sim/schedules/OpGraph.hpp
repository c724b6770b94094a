/* dbosim — a schedule's dependencies as a Boost.Graph: a vertex per op (its index in Schedule::ops), an edge per data
 * or stream dependency. Included by the sources that walk or add edges; the rest see Schedule alone. */
#pragma once
#include "sim/schedules/Schedule.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <type_traits>

namespace dbosim::sim {

/** Edges are only ever added: the graph's edge list is a vector (the default list allocates a node per edge, the
 *  most of a schedule's build time). The ops themselves live in Schedule::ops, indexed by vertex. */
using OpDag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, OpEdge,
                                    boost::no_property, boost::vecS>;
static_assert(std::is_same_v<OpDag::vertex_descriptor, OpVertex>, "an op's index is its vertex");

struct OpGraph {
  OpDag dag;
};

} // namespace dbosim::sim
