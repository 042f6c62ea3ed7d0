#include "report/catalog_report.hpp"

#include <fmt/format.h>

#include <optional>

#include "report/table.hpp"

namespace gf::report {

namespace {

using Align = TextTable::Align;
constexpr Align L = Align::left;
constexpr Align R = Align::right;

nlohmann::json pcie_json(const hw::PcieLink& p) { return {{"generation", p.generation}, {"lanes", p.lanes}}; }

nlohmann::json optional_GBps(const std::optional<Bandwidth>& b) {
  return b ? nlohmann::json(in_GBps(*b)) : nlohmann::json(nullptr);
}

nlohmann::json scale_up_json(const std::optional<hw::ScaleUpPorts>& p) {
  if (!p) return nullptr;
  return {{"kind", p->generation == 0 ? "xgmi" : "nvlink"},
          {"generation", p->generation},
          {"links", p->links},
          {"link_rate_GBps", optional_GBps(p->link_rate)}};
}

std::string gpus(const hw::Catalog& c, nlohmann::json& j) {
  TextTable t(
      {"gpu", "memory GB", "nvidia-smi MiB", "mem GB/s", "bf16 TFLOPS", "NVLink", "PCIe", "TDP W", "MIG", "source"},
      {L, R, R, R, R, L, L, R, L, L});
  j = nlohmann::json::array();
  for (const auto& [name, g] : c.gpus()) {
    const auto bf16 = g.tflops_dense.find("bf16");
    std::string nv = "-";
    if (g.nvlink)
      nv = (g.nvlink->generation == 0 ? "xGMI" : "NVLink" + std::to_string(g.nvlink->generation)) + " x" +
           std::to_string(g.nvlink->links);
    const std::string mib =
        fmt::format("{:.0f}{}", g.memory.value() / (1024.0 * 1024), g.memory_estimated ? " (est.)" : "");
    t.add_row({name, fmt::format("{:g}", in_GB(g.nominal_memory)), mib,
               fmt::format("{:g}", in_GBps(g.memory_bandwidth)),
               bf16 == g.tflops_dense.end() ? "-" : fmt::format("{:g}", bf16->second), nv,
               fmt::format("Gen{} x{}", g.pcie.generation, g.pcie.lanes), fmt::format("{:g}", g.tdp.value()),
               g.mig_supported ? std::to_string(g.mig_max_instances) : "-", g.source});
    j.push_back({{"name", name},
                 {"display_name", g.display_name},
                 {"vendor", g.vendor},
                 {"memory_GB", in_GB(g.nominal_memory)},
                 {"memory_MiB", g.memory.value() / (1024.0 * 1024)},
                 {"memory_MiB_estimate", g.memory_estimated},
                 {"memory_MiB_source", g.memory_source},
                 {"memory_bandwidth_GBps", in_GBps(g.memory_bandwidth)},
                 {"tflops_dense", g.tflops_dense},
                 {"scale_up", scale_up_json(g.nvlink)},
                 {"pcie", pcie_json(g.pcie)},
                 {"tdp_W", g.tdp.value()},
                 {"mig_supported", g.mig_supported},
                 {"mig_max_instances", g.mig_max_instances},
                 {"p2p_supported", g.p2p_supported},
                 {"compute_capability", g.compute_capability},
                 {"source", g.source},
                 {"note", g.note}});
  }
  return "GPUs:\n" + t.render(1);
}

std::string networks(const hw::Catalog& c, nlohmann::json& j) {
  TextTable t({"network", "family", "transport", "data Gb/s", "efficiency", "latency us", "source"},
              {L, L, L, R, R, R, L});
  j = nlohmann::json::array();
  for (const auto& [name, n] : c.networks()) {
    t.add_row({name, n.family, n.transport, fmt::format("{:g}", in_Gbps(n.data_rate)), fixed(n.efficiency, 3),
               fixed(in_us(n.endpoint_latency), 2), n.source});
    nlohmann::json env = nlohmann::json::object();
    for (const auto& v : n.nccl_env) env[v.name] = v.value;
    j.push_back({{"name", name},
                 {"family", n.family},
                 {"transport", n.transport},
                 {"line_rate_Gbps", n.line_rate_Gbps},
                 {"data_rate_Gbps", in_Gbps(n.data_rate)},
                 {"efficiency", n.efficiency},
                 {"endpoint_latency_us", in_us(n.endpoint_latency)},
                 {"default_switch", n.default_switch},
                 {"default_nic", n.default_nic},
                 {"load_balancing", hw::to_string(n.load_balancing)},
                 {"load_balancing_source", n.load_balancing_source},
                 {"nccl_env", env},
                 {"nccl_env_source", n.nccl_env_source},
                 {"source", n.source},
                 {"note", n.note}});
  }
  return "\nNetworks:\n" + t.render(1);
}

std::string links(const hw::Catalog& c, nlohmann::json& j) {
  TextTable t({"link", "GB/s per lane/link", "efficiency", "source"}, {L, R, R, L});
  j = nlohmann::json::array();
  for (const auto& [gen, p] : c.pcie_generations()) {
    const std::string name = "PCIe Gen" + std::to_string(gen);
    t.add_row({name, fixed(in_GBps(p.lane_rate), 3), fixed(p.copy_efficiency, 3), p.source});
    j.push_back({{"name", name},
                 {"kind", "pcie"},
                 {"generation", gen},
                 {"transfer_rate_GTps", p.transfer_rate_GTps},
                 {"encoding", p.encoding},
                 {"lane_rate_GBps", in_GBps(p.lane_rate)},
                 {"copy_efficiency", p.copy_efficiency},
                 {"hop_latency_ns", in_ns(p.hop_latency)},
                 {"switch_latency_ns", in_ns(p.switch_latency)},
                 {"source", p.source},
                 {"note", p.note}});
  }
  for (const auto& [gen, n] : c.nvlink_generations()) {
    const std::string name = "NVLink " + std::to_string(gen);
    t.add_row({name, fixed(in_GBps(n.link_rate), 3), fixed(n.efficiency, 3), n.source});
    j.push_back({{"name", name},
                 {"kind", "nvlink"},
                 {"generation", gen},
                 {"link_rate_GBps", in_GBps(n.link_rate)},
                 {"lanes_per_link", n.lanes_per_link},
                 {"max_links", n.max_links},
                 {"efficiency", n.efficiency},
                 {"hop_latency_ns", in_ns(n.hop_latency)},
                 {"source", n.source},
                 {"note", n.note}});
  }
  return "\nLinks:\n" + t.render(1);
}

void add_nics(const hw::Catalog& c, TextTable& t, nlohmann::json& j) {
  j = nlohmann::json::array();
  for (const auto& [name, n] : c.nics()) {
    t.add_row({name, "NIC",
               fmt::format("{:g} Gb/s, PCIe Gen{} x{}", in_Gbps(n.max_rate), n.pcie.generation, n.pcie.lanes),
               n.source});
    j.push_back({{"name", name},
                 {"display_name", n.display_name},
                 {"max_rate_Gbps", in_Gbps(n.max_rate)},
                 {"ports", n.ports},
                 {"pcie", pcie_json(n.pcie)},
                 {"families", n.families},
                 {"latency_ns", in_ns(n.latency)},
                 {"ll_protocols", n.ll_protocols},
                 {"source", n.source},
                 {"note", n.note}});
  }
}

void add_switches(const hw::Catalog& c, TextTable& t, nlohmann::json& j) {
  j = nlohmann::json::array();
  for (const auto& [name, s] : c.switches()) {
    t.add_row({name, "switch",
               fmt::format("{} x {:g} Gb/s, {:g} ns{}", s.radix, in_Gbps(s.port_rate), in_ns(s.latency),
                           s.sharp ? fmt::format(", SHARP at {:g} of the port", s.sharp_efficiency) : ""),
               s.source});
    j.push_back({{"name", name},
                 {"display_name", s.display_name},
                 {"family", s.family},
                 {"radix", s.radix},
                 {"port_rate_Gbps", in_Gbps(s.port_rate)},
                 {"latency_ns", in_ns(s.latency)},
                 {"sharp", s.sharp},
                 {"sharp_efficiency", s.sharp_efficiency},
                 {"source", s.source},
                 {"note", s.note}});
  }
}

void add_storage(const hw::Catalog& c, TextTable& t, nlohmann::json& j) {
  j = nlohmann::json::array();
  for (const auto& [name, s] : c.storages()) {
    t.add_row(
        {name, s.kind, fmt::format("read {:g} GB/s, write {:g} GB/s", in_GBps(s.read), in_GBps(s.write)), s.source});
    j.push_back({{"name", name},
                 {"kind", s.kind},
                 {"read_GBps", in_GBps(s.read)},
                 {"write_GBps", in_GBps(s.write)},
                 {"pcie", s.pcie ? pcie_json(*s.pcie) : nlohmann::json(nullptr)},
                 {"latency_us", in_us(s.latency)},
                 {"source", s.source},
                 {"note", s.note}});
  }
}

void add_cpus(const hw::Catalog& c, TextTable& t, nlohmann::json& j) {
  j = nlohmann::json::array();
  for (const auto& [name, cpu] : c.cpus()) {
    t.add_row({name, "CPU",
               fmt::format("{} cores, {} x{} {} = {:g} GB/s", cpu.cores, cpu.memory_type, cpu.memory_channels,
                           cpu.memory_mts, in_GBps(cpu.memory_bandwidth)),
               cpu.source});
    j.push_back({{"name", name},
                 {"display_name", cpu.display_name},
                 {"cores", cpu.cores},
                 {"memory_type", cpu.memory_type},
                 {"memory_channels", cpu.memory_channels},
                 {"memory_MTps", cpu.memory_mts},
                 {"memory_bandwidth_GBps", in_GBps(cpu.memory_bandwidth)},
                 {"stream_efficiency", cpu.stream_efficiency},
                 {"pcie", pcie_json(cpu.pcie)},
                 {"socket_link_name", cpu.socket_link_name},
                 {"socket_link_GBps", optional_GBps(cpu.socket_link)},
                 {"socket_link_device_GBps", optional_GBps(cpu.socket_link_device)},
                 {"socket_link_peer_GBps", optional_GBps(cpu.socket_link_peer)},
                 {"socket_link_latency_ns", in_ns(cpu.socket_link_latency)},
                 {"source", cpu.source},
                 {"note", cpu.note}});
  }
}

}  // namespace

CatalogReport catalog_report(const hw::Catalog& c) {
  CatalogReport r;
  r.json = nlohmann::json::object();
  r.text = gpus(c, r.json["gpus"]);
  r.text += networks(c, r.json["networks"]);
  r.text += links(c, r.json["links"]);
  TextTable t({"name", "kind", "figures", "source"}, {L, L, L, L});
  add_nics(c, t, r.json["nics"]);
  add_switches(c, t, r.json["switches"]);
  add_storage(c, t, r.json["storage"]);
  add_cpus(c, t, r.json["cpus"]);
  r.text += "\nNICs, switches, storage, CPUs:\n" + t.render(1);
  return r;
}

}  // namespace gf::report
