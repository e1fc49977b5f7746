#include "topology/topology.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <queue>
#include <set>
#include <unordered_map>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/function_property_map.hpp>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cclab::topo {
namespace {

constexpr std::array<std::pair<VertexKind, std::string_view>, 6> kVertexKinds{
    {{VertexKind::Gpu, "gpu"},
     {VertexKind::Cpu, "cpu"},
     {VertexKind::NvSwitch, "nvswitch"},
     {VertexKind::PcieSwitch, "pcie_switch"},
     {VertexKind::Nic, "nic"},
     {VertexKind::Switch, "switch"}}};
constexpr std::array<std::pair<LinkKind, std::string_view>, kAllLinkKinds.size()> kLinkKinds{
    {{LinkKind::NvLink, "nvlink"},
     {LinkKind::NvSwitch, "nvswitch"},
     {LinkKind::Pcie, "pcie"},
     {LinkKind::InfiniBand, "infiniband"},
     {LinkKind::Ethernet, "ethernet"},
     {LinkKind::Tcp, "tcp"},
     {LinkKind::Efa, "efa"},
     {LinkKind::Socket, "socket"}}};

constexpr std::array<std::pair<GpuArch, std::string_view>, 4> kGpuArchs{{{GpuArch::Volta, "volta"},
                                                                         {GpuArch::Ampere, "ampere"},
                                                                         {GpuArch::Hopper, "hopper"},
                                                                         {GpuArch::Blackwell, "blackwell"}}};
constexpr std::array<std::pair<HostCpu, std::string_view>, 3> kHostCpus{
    {{HostCpu::Intel, "intel"}, {HostCpu::Amd, "amd"}, {HostCpu::Arm, "arm"}}};

// Route cost of one hop in integer picoseconds, so that equal-cost paths tie exactly (ECMP needs exact ties).
// Capped at 1e15 ps (about 17 minutes): a hop that slow is one to avoid whatever its exact cost, and the cap
// keeps path sums of up to 9,000 hops inside int64 even for links degraded by a factor of 1e-9.
constexpr double kRouteProbeBytes = 1 << 20;
constexpr double kMaxHopCost_ps = 1e15;
std::int64_t hop_cost_ps(const Link& link) {
  return std::llround(
      std::min((link.latency_s + kRouteProbeBytes / link.bandwidth_Bps) * 1e12, kMaxHopCost_ps));
}

// Stops route()'s Dijkstra once every vertex as close to the target as the source is settled.
struct Settled {};
// Reusable search state: every route is one Dijkstra, and a 16,384-GPU fabric has ~45 k vertices, so
// initialising distance and colour maps per search would cost more than most searches (a route inside one
// node settles a handful of vertices). Outside a search every distance is +inf and every colour white; a
// search records the vertices it discovers and resets only those. One per thread (routes may be computed
// concurrently; the route cache is shared).
struct SearchScratch {
  static constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> dist;
  std::vector<boost::default_color_type> color;
  std::vector<std::size_t> touched;
  void fit(std::size_t vertices) {
    if (dist.size() < vertices) {
      dist.resize(vertices, kInf);
      color.resize(vertices, boost::white_color);
    }
  }
  void reset() {
    for (std::size_t v : touched) {
      dist[v] = kInf;
      color[v] = boost::white_color;
    }
    touched.clear();
  }
};
thread_local SearchScratch search_scratch;

// The two searches of bidirectional_route(), reused like SearchScratch: only touched vertices are reset.
struct BidirectionalScratch {
  static constexpr std::int64_t kInf =
      std::numeric_limits<std::int64_t>::max() / 4;  // sums of two stay finite
  using Entry = std::pair<std::int64_t, VertexId>;
  struct Side {
    std::vector<std::int64_t> dist;
    std::vector<std::uint8_t> settled;
    std::vector<VertexId> order;  // settled vertices, in settling order
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  };
  Side side[2];
  std::vector<std::int8_t> on_route;  // memo of the walk: 0 unknown, 1 yes, -1 no
  std::vector<std::uint8_t> seen;
  std::vector<VertexId> touched;
  std::vector<Topology::NextHop> next;
  void fit(std::size_t vertices) {
    if (seen.size() >= vertices) return;
    for (Side& s : side) {
      s.dist.resize(vertices, kInf);
      s.settled.resize(vertices, 0);
    }
    on_route.resize(vertices, 0);
    seen.resize(vertices, 0);
  }
  void touch(VertexId v) {
    if (!seen[v]) seen[v] = 1, touched.push_back(v);
  }
  void reset() {
    for (VertexId v : touched) {
      for (Side& s : side)
        s.dist[v] = kInf, s.settled[v] = 0;
      on_route[v] = 0;
      seen[v] = 0;
    }
    touched.clear();
    for (Side& s : side) {
      s.order.clear();
      s.heap = {};
    }
  }
};
thread_local BidirectionalScratch bidirectional_scratch;

// A search leaves its scratch space as it found it, however it ends (a route may throw: no path).
template <typename Scratch>
struct ResetOnExit {
  Scratch& scratch;
  ~ResetOnExit() { scratch.reset(); }
};

struct StopPastSource : boost::default_dijkstra_visitor {
  VertexId source = 0;
  SearchScratch* scratch = nullptr;
  std::int64_t* stop_above = nullptr;
  template <typename V, typename G>
  void discover_vertex(V v, const G&) const {
    scratch->touched.push_back(v);
  }
  template <typename V, typename G>
  void examine_vertex(V v, const G&) const {
    if (scratch->dist[v] > *stop_above) throw Settled{};
  }
  template <typename V, typename G>
  void finish_vertex(V v, const G&) const {
    if (v == source) *stop_above = scratch->dist[v];
  }
};

// FNV-1a: stable across runs and platforms, unlike std::hash. A seed's 8 bytes come first; seed 0 adds none.
std::uint64_t stable_hash(std::uint64_t seed, std::string_view a, std::string_view b) {
  std::uint64_t h = 1469598103934665603ULL;
  for (int i = 0; seed != 0 && i < 8; ++i)
    h = (h ^ ((seed >> (8 * i)) & 0xff)) * 1099511628211ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s)
      h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  mix(a);
  mix(b);
  return h;
}

}  // namespace

LinkModel Topology::default_link_model(LinkKind kind) {
  switch (kind) {
    // NVLink/NVSwitch: NCCL reaches about 230-240 GB/s of bus bandwidth on A100's 300 GB/s (nccl-tests on DGX
    // A100, NVIDIA's published figures), so 0.8 of the line rate carries payload.
    case LinkKind::NvLink:
    case LinkKind::NvSwitch:
      return {0.80, 0.0};
    // PCIe: TLP headers and flow control leave about 80-85% of the x16 rate for payload.
    case LinkKind::Pcie:
      return {0.80, 0.0};
    // InfiniBand: the rate a preset gives (HDR 200 Gb/s, NDR 400) is already the data rate after 64b/66b
    // line coding; what is lost beyond it is each packet's headers and CRCs (26 B per 4 KiB MTU: 0.994),
    // flow-control credits and acknowledgements. Measured through NCCL: 192 GB/s allreduce bus bandwidth on
    // DGX A100 nodes with 8 x HDR (NCCL's team, NVIDIA/nccl#812), a 96 GB/s peak on nodes with 4 x HDR
    // (nccl-tests#119), 24 GB/s from ib_write_bw on one HDR port (NVIDIA/nccl#1048): 24 of 25 GB/s, 0.96.
    // (It was 0.92, NCCL's LL128 factor, which is a protocol's, not the link's: multi-node rings came out
    // 4 % low.) About 1 us of NIC work per message (posting, completion) on top of the wire.
    case LinkKind::InfiniBand:
      return {0.96, 1e-6};
    // Ethernet / RoCE: RoCEv2 framing on a 4 KiB MTU is 0.98 (82 bytes a packet: Ethernet header and FCS,
    // IP, UDP, BTH, ICRC, preamble and gap); 0.9 allows for what RoCE fabrics lose beyond it (ACKs, pacing
    // and congestion control), an assumption to calibrate: one published run, eight 400G NICs a node with
    // NCCL's ring (NVIDIA/nccl#1221), got 40 GB/s a NIC, 0.80. 2 us NIC/stack cost per message.
    case LinkKind::Ethernet:
      return {0.90, 2e-6};
    // TCP sockets: a 1500-byte MTU frame carries 1448 bytes of payload (TCP with timestamps) in 1538 bytes on
    // the wire (IP, TCP, Ethernet header and FCS, preamble and inter-frame gap): 0.94, times the 0.9 that the
    // RoCE default allows beyond its headers (ACKs, pacing, congestion control): 0.85 for the flows together.
    // But NCCL's socket transport splits every transfer evenly over its sockets and channels, so a NIC's
    // traffic moves at the pace of its slowest TCP flow times the flow count ("the NCCL bandwidth will be the
    // minimum speed of the sockets multiplied by the number of sockets", NCCL's maintainer, nccl-tests#83),
    // and kernel TCP does not share a link evenly among flows: eight iperf3 flows over 100 Gb/s moved 86.6
    // Gb/s together, the slowest 7.63, 0.70 of the mean (NVIDIA/nccl#450, a user's run; NCCL's own result
    // there matched min x count). 0.85 x 0.70 = 0.60, what users see of wire speed through NCCL's sockets
    // ("no more than 60 % of wire speed over 32 Gbps networks", NVIDIA/nccl#209). RDMA NICs schedule their
    // queue pairs in hardware, round robin, so the other network kinds keep their shares even.
    // The kernel's TCP/IP path costs 10-30 us one way against under 1 us with RDMA ("Latency dissection:
    // where every microsecond goes in an AI cluster network", kentino.com): 10 us at each end, the sender's
    // system call and copy and the receiver's interrupt, copy and wake-up.
    case LinkKind::Tcp:
      return {0.60, 10e-6};
    // EFA: SRD runs over Ethernet, so RoCE's framing (0.9); OS bypass like RDMA, but every message also goes
    // through libfabric, NCCL's aws-ofi-nccl plugin and SRD's reliability layer in the adapter. AWS's own
    // tuner for that plugin prices a network step of a collective at 20 us on P5 and P5e (18 on P5en,
    // EFA's next generation; aws-ofi-nccl src/tuner/nccl_ofi_model.cpp, `net_lat`, where NCCL's tuner has
    // its NET latencies of 2.7-14 us for InfiniBand). A step on a DGX-class route crosses two PCIe hops and
    // a network hop at each end (2.8 us in the presets), so each end costs (20 - 2.8) / 2 = 8.6 us. (It was
    // 4 us, an assumption between RDMA and kernel TCP: two EFA nodes came out 19-36 % fast at 16 B.)
    case LinkKind::Efa:
      return {0.90, 8.6e-6};
    // CPU socket interconnect: its bandwidth in a topology is what GPU peer traffic gets through it, the
    // value NCCL assigns to its SYS links (src/graph/topo.h: QPI_BW 6, SKL_QPI_BW 10, AMD_BW 16 GB/s), well
    // under the links' line rate because the CPU turns peer writes into small transactions. So no further
    // derating here.
    case LinkKind::Socket:
      return {1.0, 0.0};
  }
  return {};
}

void Topology::set_link_model(LinkKind kind, const LinkModel& model) {
  forget_routes();
  if (!(model.efficiency > 0 && model.efficiency <= 1)) {
    throw ConfigError(
        fmt::format("{} efficiency must be in (0, 1] (got {})", to_string(kind), model.efficiency));
  }
  if (!(model.overhead_s >= 0) || !std::isfinite(model.overhead_s)) {
    throw ConfigError(fmt::format("{} overhead must be >= 0", to_string(kind)));
  }
  link_models_[static_cast<int>(kind)] = model;
}

double Topology::effective_bandwidth_Bps(std::size_t link) const {
  const Link& l = links_.at(link);
  return l.bandwidth_Bps * link_model(l.kind).efficiency;
}

double Topology::effective_latency_s(std::size_t link) const {
  const Link& l = links_.at(link);
  const bool between_switches =
      vertex(l.a).kind == VertexKind::Switch && vertex(l.b).kind == VertexKind::Switch;
  return l.latency_s + (between_switches ? 0.0 : link_model(l.kind).overhead_s);
}

bool is_network(LinkKind kind) {
  return kind == LinkKind::InfiniBand || kind == LinkKind::Ethernet || kind == LinkKind::Tcp ||
         kind == LinkKind::Efa;
}

std::string_view to_string(VertexKind kind) {
  return name_of(kVertexKinds, kind);
}
std::string_view to_string(LinkKind kind) {
  return name_of(kLinkKinds, kind);
}
std::string_view to_string(GpuArch arch) {
  return name_of(kGpuArchs, arch);
}
std::optional<GpuArch> parse_gpu_arch(std::string_view text) {
  return value_of(kGpuArchs, text);
}
std::string_view to_string(HostCpu cpu) {
  return name_of(kHostCpus, cpu);
}
std::optional<HostCpu> parse_host_cpu(std::string_view text) {
  return value_of(kHostCpus, text);
}
std::optional<VertexKind> parse_vertex_kind(std::string_view text) {
  return value_of(kVertexKinds, text);
}
std::optional<LinkKind> parse_link_kind(std::string_view text) {
  if (text == "roce") return LinkKind::Ethernet;
  if (text == "qpi" || text == "upi" || text == "xgmi") return LinkKind::Socket;
  return value_of(kLinkKinds, text);
}

VertexId Topology::add_vertex(Vertex vertex) {
  forget_routes();
  if (find(vertex.name)) throw ConfigError(fmt::format("duplicate vertex name '{}'", vertex.name));
  if (vertex.kind == VertexKind::Gpu && (vertex.node < 0 || vertex.local_rank < 0)) {
    throw ConfigError(fmt::format("GPU '{}' needs a node >= 0 and a local_rank >= 0", vertex.name));
  }
  if (vertex.sharp && vertex.kind != VertexKind::Switch) {
    throw ConfigError(fmt::format("'{}' is a {}: only a network switch reduces in the network (sharp)",
                                  vertex.name, to_string(vertex.kind)));
  }
  VertexId v = boost::add_vertex(vertex, graph_);
  by_name_.emplace(vertex.name, v);
  nic_index_.push_back(vertex.kind == VertexKind::Nic ? nics_per_node_[vertex.node]++ : -1);
  if (vertex.kind == VertexKind::Nic) nics_of_node_[vertex.node].push_back(v);
  if (vertex.node >= 0) node_ids_.insert(vertex.node);
  if (vertex.kind == VertexKind::Gpu) {
    auto key = [this](VertexId g) { return std::pair(graph_[g].node, graph_[g].local_rank); };
    auto pos = std::lower_bound(gpus_.begin(), gpus_.end(), v,
                                [&](VertexId x, VertexId y) { return key(x) < key(y); });
    if (pos != gpus_.end() && key(*pos) == key(v)) {
      throw ConfigError(fmt::format("GPUs '{}' and '{}' have the same node {} and local_rank {}",
                                    graph_[*pos].name, vertex.name, vertex.node, vertex.local_rank));
    }
    gpus_.insert(pos, v);
  }
  return v;
}

void Topology::degrade_link(std::size_t link, double bandwidth_factor, double extra_latency_s) {
  forget_routes();
  Link& l = links_.at(link);
  if (!(bandwidth_factor > 0 && bandwidth_factor <= 1) || extra_latency_s < 0)
    throw ConfigError(fmt::format(
        "link {}: a degradation needs a bandwidth factor in (0, 1] and latency >= 0", link_name(link)));
  l.bandwidth_Bps *= bandwidth_factor;
  l.latency_s += extra_latency_s;
}

void Topology::fail_link(std::size_t link) {
  forget_routes();
  links_.at(link);  // range check
  failed_.resize(links_.size(), false);
  failed_[link] = true;
}

std::string Topology::link_name(std::size_t link) const {
  const Link& l = links_.at(link);
  return graph_[l.a].name + "-" + graph_[l.b].name;
}

std::size_t Topology::add_link(VertexId a, VertexId b, LinkKind kind, double bandwidth_Bps,
                               double latency_s) {
  forget_routes();
  if (a >= num_vertices() || b >= num_vertices() || a == b) {
    throw ConfigError(fmt::format("a link must join two distinct vertices (got {} and {})", a, b));
  }
  // Physical ranges, wide enough for any network (a 1 KB/s serial line to a 1 PB/s die-to-die link).
  if (!(bandwidth_Bps >= 1e3 && bandwidth_Bps <= 1e15)) {
    throw ConfigError(fmt::format("link {} - {}: bandwidth must be in [1KB/s, 1000TB/s] (got {})",
                                  graph_[a].name, graph_[b].name, bandwidth_Bps));
  }
  if (!(latency_s >= 0 && latency_s <= 1)) {
    throw ConfigError(fmt::format("link {} - {}: latency must be in [0, 1s] (got {})", graph_[a].name,
                                  graph_[b].name, latency_s));
  }
  std::size_t id = links_.size();
  links_.push_back(Link{a, b, kind, bandwidth_Bps, latency_s});
  free_hops_ = free_hops_ || hop_cost_ps(links_.back()) <= 0;
  boost::add_edge(a, b, EdgeProps{id, true}, graph_);
  boost::add_edge(b, a, EdgeProps{id, false}, graph_);
  return id;
}

std::optional<VertexId> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<VertexId> Topology::gpus_of_node(int node) const {
  std::vector<VertexId> out;
  for (VertexId g : gpus_)
    if (graph_[g].node == node) out.push_back(g);
  return out;
}

int Topology::max_gpus_per_node() const {
  std::unordered_map<int, int> count;
  int best = 0;
  for (VertexId g : gpus_)
    best = std::max(best, ++count[graph_[g].node]);
  return best;
}

bool Topology::uniform() const {
  std::unordered_map<int, int> count;
  for (VertexId g : gpus_)
    ++count[graph_[g].node];
  int first = count.empty() ? 0 : count.begin()->second;
  return std::all_of(count.begin(), count.end(), [&](auto& kv) { return kv.second == first; });
}

const std::vector<VertexId>& Topology::nics_of_node(int node) const {
  static const std::vector<VertexId> kNone;
  const auto it = nics_of_node_.find(node);
  return it == nics_of_node_.end() ? kNone : it->second;
}

std::optional<VertexId> Topology::gpu_nic(VertexId gpu) const {
  // Planners ask for every GPU's NIC again with every plan of a sweep.
  const std::shared_ptr<RouteCache> cache = route_cache_;
  {
    const std::lock_guard<std::mutex> lock(cache->mutex);
    if (auto it = cache->gpu_nics.find(gpu); it != cache->gpu_nics.end()) return it->second;
  }
  const std::optional<VertexId> nic = nearest_nic(gpu);
  const std::lock_guard<std::mutex> lock(cache->mutex);
  cache->gpu_nics.emplace(gpu, nic);
  return nic;
}

std::optional<VertexId> Topology::nearest_nic(VertexId gpu) const {
  const Vertex& g = graph_[gpu];
  const std::vector<VertexId>& nics = nics_of_node(g.node);
  // The route cost to each of the node's NICs, by one Dijkstra over the node's own vertices: the network lies
  // beyond the NICs, so no shortest route from a GPU to its node's NIC leaves the node, and searching route()
  // by route() reached the fabric switch behind the NIC and every one of its ports (at 16,384 GPUs, 131 k
  // routes through a switch of 16 k ports: 20 s). GPUs are endpoints only, as in route().
  std::unordered_map<VertexId, std::int64_t> cost{{gpu, 0}};
  using Entry = std::pair<std::int64_t, VertexId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  heap.push({0, gpu});
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d > cost.at(u) || (u != gpu && graph_[u].kind == VertexKind::Gpu)) continue;
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const VertexId v = boost::target(*e, graph_);
      if (link_failed(graph_[*e].link) || graph_[v].node != g.node) continue;
      const std::int64_t dv = d + hop_cost_ps(links_[graph_[*e].link]);
      if (auto [it, fresh] = cost.try_emplace(v, dv); fresh || dv < it->second) {
        it->second = dv;
        heap.push({dv, v});
      }
    }
  }
  std::optional<VertexId> best;
  std::int64_t best_cost = std::numeric_limits<std::int64_t>::max();
  for (VertexId nic : nics) {
    const auto it = cost.find(nic);
    if (it == cost.end()) continue;  // cut off from the GPU
    if (it->second < best_cost || (it->second == best_cost && own_nic(gpu, nic)))
      best_cost = it->second, best = nic;
  }
  return best;
}

std::optional<VertexId> Topology::unreachable_gpu(VertexId gpu) const {
  // GPUs are endpoints only (as in route()): edges leaving another GPU are not followed.
  std::function<bool(const Graph::edge_descriptor&)> usable = [&](const Graph::edge_descriptor& e) {
    const VertexId source = boost::source(e, graph_);
    return !link_failed(graph_[e].link) && (source == gpu || graph_[source].kind != VertexKind::Gpu);
  };
  boost::filtered_graph<Graph, std::function<bool(const Graph::edge_descriptor&)>> view(graph_, usable);
  std::vector<boost::default_color_type> color(num_vertices(), boost::white_color);
  boost::breadth_first_search(view, gpu,
                              boost::color_map(boost::make_iterator_property_map(
                                  color.begin(), boost::get(boost::vertex_index, graph_))));
  for (VertexId other : gpus_)
    if (color[other] == boost::white_color) return other;
  return std::nullopt;
}

Route Topology::route(VertexId from, VertexId to) const {
  // The α-β model asks for the same pairs for every candidate algorithm and bucket size.
  const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
  const std::shared_ptr<RouteCache> cache = route_cache_;
  {
    const std::lock_guard<std::mutex> lock(cache->mutex);
    if (auto it = cache->routes.find(key); it != cache->routes.end()) return it->second;
  }
  Route result = compute_route(from, to);
  const std::lock_guard<std::mutex> lock(cache->mutex);
  cache->routes.emplace(key, result);
  return result;
}

// NCCL pairs a GPU with NIC (local rank mod the node's NICs) where it has a choice.
bool Topology::own_nic(VertexId gpu, VertexId nic) const {
  const Vertex& g = graph_[gpu];
  return g.kind == VertexKind::Gpu && nic_index_[nic] >= 0 && g.node == graph_[nic].node &&
         nic_index_[nic] == g.local_rank % nics_per_node_.at(g.node);
}

// Among the equal-cost next hops out of one vertex (in its out-edge order, i.e. by link id): a GPU endpoint's
// own NIC, else the flow hash's pick.
std::size_t Topology::choose_next_hop(VertexId from, VertexId to, std::uint64_t flow_hash,
                                      std::span<const NextHop> next) const {
  std::size_t chosen = flow_hash % next.size();
  for (std::size_t i = 0; i < next.size(); ++i) {
    const VertexId v = next[i].target;
    if (nic_index_[v] < 0) continue;
    for (VertexId gpu : {from, to})
      if (own_nic(gpu, v)) chosen = i;
  }
  return chosen;
}

void Topology::append_hop(Route& route, const NextHop& hop) const {
  route.hops.push_back(Hop{hop.link, hop.forward});
  route.latency_s += effective_latency_s(hop.link);
  route.bottleneck_bandwidth_Bps =
      std::min(route.bottleneck_bandwidth_Bps, effective_bandwidth_Bps(hop.link));
}

Route Topology::compute_route(VertexId from, VertexId to) const {
  if (from == to || free_hops_) return reference_route(from, to);
  return bidirectional_route(from, to);
}

Route Topology::reference_route(VertexId from, VertexId to) const {
  Route result;
  result.bottleneck_bandwidth_Bps = std::numeric_limits<double>::infinity();
  if (from == to) return result;

  // GPUs are endpoints only: a GPU-to-NIC path must not detour through a peer GPU's NVLink. Failed links
  // (what-if faults) carry nothing. (Concrete predicate types: a filtered_graph copies its predicates into
  // every edge iterator, and std::function copies allocate.)
  struct KeepVertex {
    const Graph* graph;
    VertexId from, to;
    bool operator()(VertexId v) const { return v == from || v == to || (*graph)[v].kind != VertexKind::Gpu; }
  };
  struct WorkingEdge {
    const Topology* topology;
    bool operator()(const Graph::edge_descriptor& e) const {
      return !topology->link_failed(topology->graph_[e].link);
    }
  };
  boost::filtered_graph<Graph, WorkingEdge, KeepVertex> view(graph_, WorkingEdge{this},
                                                             KeepVertex{&graph_, from, to});
  auto weight = boost::make_function_property_map<Graph::edge_descriptor, std::int64_t>(
      [&](const Graph::edge_descriptor& e) { return hop_cost_ps(links_[graph_[e].link]); });

  // Distances to `to` (links are symmetric, so a search from `to` gives them), then walk from `from`.
  // The search stops once every vertex as close to `to` as `from` is settled: the walk below only steps to
  // vertices closer to `to` than the one it is at (or as close, over a free hop), and those are all settled
  // by then, so the route is the one a full search gives.
  SearchScratch& scratch = search_scratch;
  scratch.fit(num_vertices());
  const ResetOnExit<SearchScratch> reset_on_exit{scratch};
  const std::vector<std::int64_t>& dist = scratch.dist;
  std::int64_t stop_above = SearchScratch::kInf;
  StopPastSource stop;
  stop.source = from;
  stop.scratch = &scratch;
  stop.stop_above = &stop_above;
  const auto index = boost::get(boost::vertex_index, graph_);
  scratch.dist[to] = 0;
  scratch.touched.push_back(to);
  try {
    boost::dijkstra_shortest_paths_no_init(
        view, to, boost::dummy_property_map(), boost::make_iterator_property_map(scratch.dist.begin(), index),
        weight, index, std::less<std::int64_t>(), boost::closed_plus<std::int64_t>(SearchScratch::kInf),
        std::int64_t{0}, stop, boost::make_iterator_property_map(scratch.color.begin(), index));
  } catch (const Settled&) {
  }
  if (dist[from] == SearchScratch::kInf) {
    throw ConfigError(
        fmt::format("topology '{}': no route from {} to {}", name_, graph_[from].name, graph_[to].name));
  }
  const std::uint64_t flow_hash = stable_hash(ecmp_seed_, graph_[from].name, graph_[to].name);
  std::vector<NextHop> next;
  VertexId at = from;
  while (at != to) {
    next.clear();
    for (auto [e, end] = boost::out_edges(at, view); e != end; ++e) {
      VertexId v = boost::target(*e, view);
      if (dist[v] != SearchScratch::kInf && dist[v] + weight[*e] == dist[at])
        next.push_back(NextHop{v, graph_[*e].link, graph_[*e].forward});
    }
    CCLAB_ENFORCE(!next.empty(), "route walk from {} lost its way at {}", graph_[from].name, graph_[at].name);
    const NextHop& hop = next[choose_next_hop(from, to, flow_hash, next)];
    append_hop(result, hop);
    at = hop.target;
  }
  return result;
}

// Two Dijkstra searches, from `from` (F) and from `to` (B), over the same graph (links are symmetric).
//
// 1. They alternate (the side with the nearer frontier pops) until the two frontiers together reach the best
//    meeting found, μ = min df(v) + dt(v): then μ = D, the route's cost. The vertex that would meet that
//    criterion is not expanded, which on a big fabric is the switch in the middle: its thousands of NIC
//    neighbours are never looked at.
// 2. F then settles every vertex with df <= D/2 and B every one with dt <= D - D/2, expanding only vertices
//    strictly inside their radius. Hop costs are positive (else compute_route takes the reference search),
//    so every vertex on a least-cost route is settled with its exact distance by one of them: df(v) <= D/2,
//    or dt(v) = D - df(v) < D - D/2.
// 3. The walk from `from` steps, as the reference walk does, to the neighbours v that keep it on a least-cost
//    route, dt(v) = dt(at) - w. A B-settled v shows it directly. An F-only v must have df(v) = df(at) + w and
//    lie on a least-cost route itself, which a memoized search over F-settled vertices decides (it reaches
//    B-settled ones within a few hops). At a B-settled vertex of high degree (the switch), the candidates
//    are found from the other side: the B-settled vertices with an edge to it.
// Same next-hop sets in the same order as the reference, hence the same routes (tests compare the two).
Route Topology::bidirectional_route(VertexId from, VertexId to) const {
  Route result;
  result.bottleneck_bandwidth_Bps = std::numeric_limits<double>::infinity();
  BidirectionalScratch& sc = bidirectional_scratch;
  sc.fit(num_vertices());
  const ResetOnExit<BidirectionalScratch> reset_on_exit{sc};
  constexpr std::int64_t kInf = BidirectionalScratch::kInf;
  auto usable = [&](VertexId v) { return v == from || v == to || graph_[v].kind != VertexKind::Gpu; };
  auto weight = [&](const Graph::edge_descriptor& e) { return hop_cost_ps(links_[graph_[e].link]); };
  BidirectionalScratch::Side* sides[2] = {&sc.side[0], &sc.side[1]};
  auto seed = [&](int s, VertexId v) {
    sc.touch(v);
    sides[s]->dist[v] = 0;
    sides[s]->heap.push({0, v});
  };
  seed(0, from);
  seed(1, to);
  std::int64_t mu = kInf;
  // The nearest frontier entry of a side (stale entries dropped), kInf when it is empty.
  auto top = [&](int s) {
    auto& heap = sides[s]->heap;
    while (!heap.empty() &&
           (heap.top().first > sides[s]->dist[heap.top().second] || sides[s]->settled[heap.top().second])) {
      heap.pop();
    }
    return heap.empty() ? kInf : heap.top().first;
  };
  auto expand = [&](int s, VertexId u) {
    const std::int64_t du = sides[s]->dist[u];
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const VertexId v = boost::target(*e, graph_);
      if (link_failed(graph_[*e].link) || !usable(v)) continue;
      const std::int64_t dv = du + weight(*e);
      if (dv < sides[s]->dist[v]) {
        sc.touch(v);
        sides[s]->dist[v] = dv;
        sides[s]->heap.push({dv, v});
        if (sides[1 - s]->dist[v] != kInf) mu = std::min(mu, dv + sides[1 - s]->dist[v]);
      }
    }
  };
  auto settle = [&](int s) {
    const VertexId u = sides[s]->heap.top().second;
    sides[s]->heap.pop();
    sides[s]->settled[u] = 1;
    sides[s]->order.push_back(u);
    return u;
  };
  if (from != to) {
    while (true) {
      const std::int64_t tf = top(0), tb = top(1);
      if (tf == kInf && tb == kInf) break;
      if (tf + tb >= mu) break;  // (kInf is a quarter of the range: sums stay exact)
      const int s = tf <= tb ? 0 : 1;
      expand(s, settle(s));
    }
  }
  if (mu == kInf) {
    throw ConfigError(
        fmt::format("topology '{}': no route from {} to {}", name_, graph_[from].name, graph_[to].name));
  }
  const std::int64_t radius[2] = {mu / 2, mu - mu / 2};
  for (int s = 0; s < 2; ++s) {
    while (top(s) <= radius[s]) {
      const VertexId u = settle(s);
      if (sides[s]->dist[u] < radius[s]) expand(s, u);
    }
  }
  const auto& F = *sides[0];
  const auto& B = *sides[1];
  // Whether an F-settled vertex (not B-settled) lies on a least-cost route: one of its edges continues one.
  auto on_route = [&](auto&& self, VertexId v) -> bool {
    if (B.settled[v]) return F.dist[v] + B.dist[v] == mu;
    std::int8_t& memo = sc.on_route[v];
    if (memo != 0) return memo > 0;
    bool yes = false;
    for (auto [e, end] = boost::out_edges(v, graph_); e != end && !yes; ++e) {
      const VertexId u = boost::target(*e, graph_);
      if (link_failed(graph_[*e].link) || !usable(u)) continue;
      const std::int64_t du = F.dist[v] + weight(*e);
      if (B.settled[u]) {
        yes = du + B.dist[u] == mu;
      } else if (F.settled[u] && F.dist[u] == du) {
        yes = self(self, u);
      }
    }
    memo = yes ? 1 : -1;
    return yes;
  };
  const std::uint64_t flow_hash = stable_hash(ecmp_seed_, graph_[from].name, graph_[to].name);
  std::vector<NextHop>& next = sc.next;
  VertexId at = from;
  while (at != to) {
    next.clear();
    const std::int64_t dt_at = B.settled[at] ? B.dist[at] : mu - F.dist[at];
    const std::size_t degree = boost::out_degree(at, graph_);
    if (B.settled[at] && degree > 64 && B.order.size() * 4 < degree) {
      // From the other side: B-settled vertices u with an edge u -> at that keeps the route least-cost.
      for (const VertexId u : B.order) {
        if (B.dist[u] >= dt_at || !usable(u)) continue;
        for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
          if (boost::target(*e, graph_) != at || link_failed(graph_[*e].link)) continue;
          if (B.dist[u] + weight(*e) == dt_at)
            next.push_back(NextHop{u, graph_[*e].link, !graph_[*e].forward});
        }
      }
      std::sort(next.begin(), next.end(), [](const NextHop& a, const NextHop& b) { return a.link < b.link; });
    } else {
      for (auto [e, end] = boost::out_edges(at, graph_); e != end; ++e) {
        const VertexId v = boost::target(*e, graph_);
        if (link_failed(graph_[*e].link) || !usable(v)) continue;
        const std::int64_t w = weight(*e);
        const bool keeps = B.settled[v]
                               ? B.dist[v] + w == dt_at
                               : F.settled[v] && F.dist[v] == mu - dt_at + w && on_route(on_route, v);
        if (keeps) next.push_back(NextHop{v, graph_[*e].link, graph_[*e].forward});
      }
    }
    CCLAB_ENFORCE(!next.empty(), "route walk from {} lost its way at {}", graph_[from].name, graph_[at].name);
    const NextHop& hop = next[choose_next_hop(from, to, flow_hash, next)];
    append_hop(result, hop);
    at = hop.target;
  }
  return result;
}

void Topology::write_dot(std::ostream& out) const {
  // One edge per link: keep the forward direction of each.
  auto forward_only = [this](const Graph::edge_descriptor& e) { return graph_[e].forward; };
  boost::filtered_graph<Graph, std::function<bool(Graph::edge_descriptor)>> view(graph_, forward_only);
  auto vertex_writer = [this](std::ostream& os, VertexId v) {
    const Vertex& vx = graph_[v];
    const char* shape = vx.kind == VertexKind::Gpu   ? "box"
                        : vx.kind == VertexKind::Nic ? "ellipse"
                                                     : "diamond";
    os << fmt::format("[label=\"{}\\n{}\" shape={}]", vx.name, to_string(vx.kind), shape);
  };
  auto edge_writer = [this](std::ostream& os, const Graph::edge_descriptor& e) {
    const Link& l = links_[graph_[e].link];
    os << fmt::format("[dir=none label=\"{} {}\"]", to_string(l.kind), format_bandwidth(l.bandwidth_Bps));
  };
  boost::write_graphviz(out, view, vertex_writer, edge_writer);
}

void Topology::set_ecmp_seed(std::uint64_t seed) {
  ecmp_seed_ = seed;
  forget_routes();
}

void Topology::add_background(BackgroundFlow flow) {
  if (flow.from >= num_vertices() || flow.to >= num_vertices() || flow.from == flow.to)
    throw ConfigError(fmt::format("topology '{}': a background flow needs two distinct vertices", name_));
  if (flow.streams < 1)
    throw ConfigError(fmt::format("topology '{}': a background flow needs streams >= 1", name_));
  background_.push_back(flow);
}

bool Topology::operator==(const Topology& other) const {
  if (name_ != other.name_ || gpu_arch_ != other.gpu_arch_ || host_cpu_ != other.host_cpu_ ||
      links_ != other.links_ || background_ != other.background_ || ecmp_seed_ != other.ecmp_seed_ ||
      num_vertices() != other.num_vertices() || link_models_ != other.link_models_) {
    return false;
  }
  for (VertexId v = 0; v < num_vertices(); ++v)
    if (!(graph_[v] == other.graph_[v])) return false;
  return true;
}

std::optional<SwitchPort> nvswitch_port(const Topology& t, VertexId gpu) {
  std::optional<SwitchPort> port;
  for (auto [e, end] = boost::out_edges(gpu, t.graph()); e != end; ++e) {
    const std::size_t link = t.graph()[*e].link;
    const VertexId other = boost::target(*e, t.graph());
    if (t.link_failed(link) || t.vertex(other).kind != VertexKind::NvSwitch) continue;
    if (port && port->link < link) continue;
    const bool forward = t.link(link).a == gpu;  // `a -> b` is a link's forward direction
    port = SwitchPort{link, other, Hop{link, forward}, Hop{link, !forward}};
  }
  return port;
}

std::optional<SwitchPort> sharp_port(const Topology& t, VertexId gpu) {
  const std::optional<VertexId> nic = t.gpu_nic(gpu);
  if (!nic) return std::nullopt;
  std::optional<SwitchPort> port;
  for (auto [e, end] = boost::out_edges(*nic, t.graph()); e != end; ++e) {
    const std::size_t link = t.graph()[*e].link;
    const VertexId other = boost::target(*e, t.graph());
    if (t.link_failed(link) || t.vertex(other).kind != VertexKind::Switch) continue;
    if (port && port->link < link) continue;
    const bool forward = t.link(link).a == *nic;
    port = SwitchPort{link, other, Hop{link, forward}, Hop{link, !forward}};
  }
  return port;
}

}  // namespace cclab::topo
