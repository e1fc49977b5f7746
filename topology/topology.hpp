// The cluster as a Boost.Graph: GPUs, host CPUs, NVSwitches, PCIe switches, NICs and network switches joined
// by full-duplex links. Each link has a kind, a bandwidth per direction (bytes/s) and a latency (s). World
// ranks are the GPUs in (node, local_rank) order, which is what planners and backends use to map ranks onto
// hardware.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace cclab::topo {

enum class VertexKind { Gpu, Cpu, NvSwitch, PcieSwitch, Nic, Switch };
// Socket: the interconnect between a node's CPU sockets (QPI, UPI, Infinity Fabric), which GPU peer traffic
// without NVLink crosses. Tcp: kernel TCP sockets over Ethernet (NCCL's socket transport, Gloo); Efa: AWS's
// Elastic Fabric Adapter (SRD through libfabric). Ethernet stands for RDMA over Converged Ethernet.
enum class LinkKind { NvLink, NvSwitch, Pcie, InfiniBand, Ethernet, Tcp, Efa, Socket };
inline constexpr std::array kAllLinkKinds{LinkKind::NvLink,     LinkKind::NvSwitch, LinkKind::Pcie,
                                          LinkKind::InfiniBand, LinkKind::Ethernet, LinkKind::Tcp,
                                          LinkKind::Efa,        LinkKind::Socket};
// The kinds that join nodes: a route over one of them is a network route (NCCL's NET path).
bool is_network(LinkKind kind);
// The GPU architecture classes of NCCL's tuning constants (its compCapIndex): Volta stands for everything
// before sm_80 (P100, V100), then Ampere (sm_80), Hopper (sm_90) and Blackwell (sm_100).
enum class GpuArch { Volta, Ampere, Hopper, Blackwell };
// The host CPUs' maker, where NCCL's tuning constants depend on it: across nodes its LL bandwidth ceiling is
// measured per host CPU (Intel or AMD), not per GPU (src/graph/tuning.cc, llMaxBws). Arm hosts (Grace) take
// NCCL's non-AMD row, as an unknown host does.
enum class HostCpu { Intel, Amd, Arm };

std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkKind kind);
// Parse a kind name; nullopt when unknown (callers name the valid choices in their error).
std::optional<VertexKind> parse_vertex_kind(std::string_view text);
// "roce" is an alias of ethernet; "qpi", "upi" and "xgmi" of socket.
std::optional<LinkKind> parse_link_kind(std::string_view text);
std::string_view to_string(GpuArch arch);
std::optional<GpuArch> parse_gpu_arch(std::string_view text);
inline constexpr std::string_view kGpuArchNames = "volta, ampere, hopper, blackwell";
std::string_view to_string(HostCpu cpu);
std::optional<HostCpu> parse_host_cpu(std::string_view text);
inline constexpr std::string_view kHostCpuNames = "intel, amd, arm";
inline constexpr std::string_view kVertexKindNames = "gpu, cpu, nvswitch, pcie_switch, nic, switch";
inline constexpr std::string_view kLinkKindNames =
    "nvlink, nvswitch, pcie, infiniband, ethernet (or roce), tcp, efa, socket (or qpi, upi, xgmi)";

// How a link kind's protocol uses its wire: the fraction of the line rate that carries payload, and a fixed
// cost added to every message at every hop of that kind. Both are calibration parameters (cclab calibrate
// fits them); the defaults are in Topology::default_link_model() with their sources.
struct LinkModel {
  double efficiency = 1.0;  // payload bandwidth / line rate, in (0, 1]
  // Added to the latency of every message at each end of a route: on every link of this kind that touches a
  // device (GPU, CPU, NIC, PCIe switch), not on links between fabric switches, whose forwarding the link
  // latency already holds. It is the sender's or the receiver's stack (posting, completion, a system call).
  double overhead_s = 0.0;
  bool operator==(const LinkModel&) const = default;
};

struct Vertex {
  std::string name;
  VertexKind kind = VertexKind::Gpu;
  int node = -1;        // server index; -1 for fabric switches
  int local_rank = -1;  // GPU index inside its node; -1 for everything else
  // A network switch that reduces in the network (InfiniBand SHARP: the switches of an aggregation tree sum
  // what the members send and return the result to all of them); only for kind Switch.
  bool sharp = false;

  bool operator==(const Vertex&) const = default;
};

struct Link {
  std::size_t a = 0, b = 0;  // endpoint vertices
  LinkKind kind = LinkKind::Pcie;
  double bandwidth_Bps = 0;  // per direction
  double latency_s = 0;

  bool operator==(const Link&) const = default;
};

// One direction of a link: id = 2 * link + (forward ? 0 : 1), forward meaning a -> b.
struct Hop {
  std::size_t link = 0;
  bool forward = true;
  std::size_t directed_id() const { return 2 * link + (forward ? 0 : 1); }
  bool operator==(const Hop&) const = default;
};

// Latency and bandwidth are effective values: per-hop latency plus the kind's overhead, line rate times the
// kind's efficiency.
struct Route {
  std::vector<Hop> hops;
  double latency_s = 0;                 // sum over hops
  double bottleneck_bandwidth_Bps = 0;  // min over hops; +inf for an empty route (same vertex)
};

struct EdgeProps {
  std::size_t link = 0;
  bool forward = true;
};

// Directed graph holding both directions of every link, so out_edges(v) are v's neighbours.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, Vertex, EdgeProps>;
using VertexId = std::size_t;

class Topology {
 public:
  Topology() = default;
  explicit Topology(std::string name) : name_(std::move(name)) {}
  // Copies and moves are defined once, in topology/topology_copy.cpp: inlined wherever a topology is copied
  // (or moved: Boost's adjacency_list has no move constructor, so a move copies it), Boost.Graph's graph copy
  // draws GCC 12's -Wmaybe-uninitialized, a false positive on its edge iterator.
  Topology(const Topology&);
  Topology& operator=(const Topology&);
  Topology(Topology&&);
  Topology& operator=(Topology&&);
  ~Topology();

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // The GPUs' architecture, where known: NCCL caps its LL and LL128 bandwidth per architecture
  // (engine/model/protocol.hpp). Presets set it; a YAML topology may (`gpu_arch`).
  std::optional<GpuArch> gpu_arch() const { return gpu_arch_; }
  void set_gpu_arch(std::optional<GpuArch> arch) { gpu_arch_ = arch; }
  // The host CPUs' maker, where known (presets set it; a YAML topology may, `host_cpu`): NCCL's LL ceiling
  // across nodes depends on it.
  std::optional<HostCpu> host_cpu() const { return host_cpu_; }
  void set_host_cpu(std::optional<HostCpu> cpu) { host_cpu_ = cpu; }
  // The switches' ECMP hash seed: which of equal-cost next hops a flow takes is (hash of seed, source and
  // destination names) mod the choices. Seed 0 is the hash without a seed; another seed is another draw of
  // the same fabric (where flows collide on a spine moves). Presets: `ecmp_seed=`; YAML: `ecmp_seed:`.
  std::uint64_t ecmp_seed() const { return ecmp_seed_; }
  void set_ecmp_seed(std::uint64_t seed);

  // Traffic of other jobs on the fabric (the what-if "neighbour job"): each flow runs between two vertices
  // for as long as the collective does, as `streams` concurrent streams. The α-β model counts its streams
  // among the channels that split each link it crosses; the simulator runs them beside the schedule.
  struct BackgroundFlow {
    VertexId from = 0, to = 0;
    int streams = 1;
    bool operator==(const BackgroundFlow&) const = default;
  };
  // Both vertices must exist and differ, streams >= 1 (ConfigError otherwise).
  void add_background(BackgroundFlow flow);
  const std::vector<BackgroundFlow>& background() const { return background_; }

  // Building. Names must be unique; links must join two distinct existing vertices with positive bandwidth.
  VertexId add_vertex(Vertex vertex);
  std::size_t add_link(VertexId a, VertexId b, LinkKind kind, double bandwidth_Bps, double latency_s);

  std::size_t num_vertices() const { return boost::num_vertices(graph_); }
  std::size_t num_links() const { return links_.size(); }
  const Vertex& vertex(VertexId v) const { return graph_[v]; }
  const Link& link(std::size_t id) const { return links_.at(id); }
  const std::vector<Link>& links() const { return links_; }
  // Effective per-direction payload bandwidth and per-message latency of a link (see LinkModel).
  double effective_bandwidth_Bps(std::size_t link) const;
  double effective_latency_s(std::size_t link) const;
  const LinkModel& link_model(LinkKind kind) const { return link_models_[static_cast<int>(kind)]; }
  void set_link_model(LinkKind kind, const LinkModel& model);
  // What-if faults: a link's bandwidth times `bandwidth_factor` (in (0, 1]) and `extra_latency_s` more
  // latency, both directions. Routing sees the change (least-cost paths may move).
  void degrade_link(std::size_t link, double bandwidth_factor, double extra_latency_s);
  std::string link_name(std::size_t link) const;  // "A-B", the endpoints' names
  // A failed link carries nothing: routing avoids it, and route() throws when no path is left.
  void fail_link(std::size_t link);
  bool link_failed(std::size_t link) const { return link < failed_.size() && failed_[link]; }
  static LinkModel default_link_model(LinkKind kind);
  const Graph& graph() const { return graph_; }
  std::optional<VertexId> find(std::string_view name) const;

  // Queries planners use.
  const std::vector<VertexId>& gpus() const { return gpus_; }           // world rank -> GPU vertex
  int num_nodes() const { return static_cast<int>(node_ids_.size()); }  // distinct node indices
  std::vector<VertexId> gpus_of_node(int node) const;
  int node_of_rank(int rank) const { return graph_[gpus_.at(rank)].node; }
  int local_rank_of(int rank) const { return graph_[gpus_.at(rank)].local_rank; }
  // Largest number of GPUs in one node; uniform() says whether every node has that many.
  int max_gpus_per_node() const;
  bool uniform() const;
  // The NIC `gpu` sends and receives through, as routing picks it: its own (index local_rank mod the node's
  // NICs) when that one is among the nearest, else the nearest declared first; nullopt without NICs.
  std::optional<VertexId> gpu_nic(VertexId gpu) const;
  const std::vector<VertexId>& nics_of_node(int node) const;  // in declaration order

  // Deterministic route between two vertices: least cost, where a hop costs its latency plus the time a 1 MiB
  // message spends on it, so NVLink beats PCIe and fewer switch hops win. GPUs are never transit vertices.
  // Among equal-cost next hops: a NIC of the source's or destination's node is chosen by the GPU, which uses
  // its own NIC (index local_rank mod the node's NICs, as NCCL pairs each GPU with its nearest NIC) when that
  // one is a choice; switches choose by ECMP, (hash of source and destination names) mod the number of
  // choices, a per-flow hash, so different pairs spread over spines while one pair always takes one path.
  // Throws ConfigError when the two vertices are not connected.
  Route route(VertexId from, VertexId to) const;
  // A GPU that `gpu` has no route to (over working links, never through another GPU), or nullopt when it
  // reaches them all: one breadth-first search, where calling route() per GPU would run a Dijkstra each.
  std::optional<VertexId> unreachable_gpu(VertexId gpu) const;
  Route route_between_ranks(int from, int to) const { return route(gpus_.at(from), gpus_.at(to)); }
  // The same route from one search out of `to` that settles every vertex nearer to it than `from`: simple
  // and slow on big fabrics (a route across one switch settles every NIC under it). route() searches from
  // both ends and takes this one only where a hop costs nothing; tests hold the two equal. Uncached.
  Route reference_route(VertexId from, VertexId to) const;

  // One equal-cost next hop of a route walk (public for the search's scratch space).
  struct NextHop {
    VertexId target = 0;
    std::size_t link = 0;
    bool forward = true;
  };

  // Graphviz DOT (one undirected edge per link, labelled with kind and bandwidth).
  void write_dot(std::ostream& out) const;

  bool operator==(const Topology& other) const;

 private:
  std::string name_;
  std::optional<GpuArch> gpu_arch_;
  std::optional<HostCpu> host_cpu_;
  std::uint64_t ecmp_seed_ = 0;
  Graph graph_;
  Route compute_route(VertexId from, VertexId to) const;
  Route bidirectional_route(VertexId from, VertexId to) const;
  std::size_t choose_next_hop(VertexId from, VertexId to, std::uint64_t flow_hash,
                              std::span<const NextHop> next) const;
  void append_hop(Route& route, const NextHop& hop) const;
  bool own_nic(VertexId gpu, VertexId nic) const;  // `nic` is the one `gpu` takes when it has a choice
  std::optional<VertexId> nearest_nic(VertexId gpu) const;  // gpu_nic, uncached
  bool free_hops_ =
      false;  // some link's route cost rounds to 0 ps: bidirectional_route() needs positive ones

  std::vector<Link> links_;
  std::vector<bool> failed_;  // per link, what-if failures
  std::unordered_map<std::string, VertexId> by_name_;
  std::array<LinkModel, kAllLinkKinds.size()> link_models_ = [] {
    std::array<LinkModel, kAllLinkKinds.size()> models;
    for (LinkKind kind : kAllLinkKinds)
      models[static_cast<int>(kind)] = default_link_model(kind);
    return models;
  }();
  std::vector<VertexId> gpus_;
  std::vector<int> nic_index_;  // per vertex: index of a NIC among its node's NICs, else -1
  std::unordered_map<int, int> nics_per_node_;
  std::unordered_map<int, std::vector<VertexId>> nics_of_node_;
  std::set<int> node_ids_;  // indices need not be dense: a file may number nodes as it likes
  std::vector<BackgroundFlow> background_;

  // Routes already computed. Every change to the graph or its links starts a fresh cache; copies share one
  // until either changes (faults copy a topology, then degrade or fail links on the copy).
  struct RouteCache {
    std::mutex mutex;
    std::unordered_map<std::uint64_t, Route> routes;
    std::unordered_map<VertexId, std::optional<VertexId>> gpu_nics;  // gpu_nic's answers
  };
  mutable std::shared_ptr<RouteCache> route_cache_ = std::make_shared<RouteCache>();
  void forget_routes() { route_cache_ = std::make_shared<RouteCache>(); }
};

// Where a GPU's data enters and leaves a switch that reduces it: the link, the switch at its other end, and
// the link's two directions.
struct SwitchPort {
  std::size_t link = 0;
  VertexId sw = 0;
  Hop up;    // towards the switch
  Hop down;  // from the switch
};
// The link by which `gpu` reaches an NVSwitch (the lowest-numbered working one), where in-switch reduction
// (NVLS) enters and leaves the GPU; nullopt when it has none.
std::optional<SwitchPort> nvswitch_port(const Topology& t, VertexId gpu);
// In-network reduction across nodes (InfiniBand SHARP, NCCL's CollNet): the link from `gpu`'s NIC to the
// network switch it hangs off (the lowest-numbered working one), where the GPU's data enters the switches'
// reduction tree and its result comes back; nullopt without a NIC or switch. Whether that switch reduces is
// its Vertex::sharp. (The PCIe hops from the GPU to its NIC are not part of the port: they are at least as
// fast as the NIC on the machines this models.)
std::optional<SwitchPort> sharp_port(const Topology& t, VertexId gpu);

}  // namespace cclab::topo
