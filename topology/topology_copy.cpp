// Topology's copies, moves and destructor, alone in this file so that the one warning flag they need is set
// for nothing else (topology/CMakeLists.txt): GCC 12 takes Boost.Graph's adjacency_list copy for a read of an
// uninitialized edge iterator (-Wmaybe-uninitialized), which it is not.
#include "topology/topology.hpp"

namespace cclab::topo {

Topology::Topology(const Topology&) = default;
Topology& Topology::operator=(const Topology&) = default;
Topology::Topology(Topology&&) = default;
Topology& Topology::operator=(Topology&&) = default;
Topology::~Topology() = default;

}  // namespace cclab::topo
