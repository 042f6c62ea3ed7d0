#include "plan/price_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::plan {
namespace {

// The fastest optic a price may be given for, Gb/s (1.6 Pb/s: far past any port sold).
constexpr long kMaxOpticGbps = 1'600'000;

Price read_price(const Fields& f, const char* amount, double scale = 1.0) {
  Price p;
  p.usd = f.number(amount) * scale;
  if (!(p.usd >= 0)) f.fail(amount, "negative", "a price of zero or more");
  if (f.has("power_W")) p.power_w = f.physical("power_W", 1, physical::power);
  p.date = f.text("date");
  p.source = f.text("source");
  p.note = f.text_or("note", "");
  p.estimate = f.flag_or("estimate", false);
  return p;
}

template <typename Key, typename ReadKey>
void read_section(const YAML::Node& root, const std::string& file, const char* section,
                  std::initializer_list<const char*> keys, const char* amount, std::map<Key, Price>& into,
                  ReadKey read_key) {
  if (!root[section]) return;
  const auto items = as_list(root[section], file, section);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Fields f(items[i], file, fmt::format("{}[{}]", section, i), keys);
    into[read_key(f)] = read_price(f, amount);
  }
}

// The entry `key` of a section, or an InputError naming the plan key that would supply it.
const Price& find_price(const std::map<std::string, Price>& section, const char* name, const std::string& key) {
  const auto it = section.find(key);
  if (it == section.end()) {
    throw InputError({}, fmt::format("prices.{}.{}", name, key), "no price for '" + key + "' in the price catalog",
                     fmt::format("add it to the plan: prices: {{{}: {{{}: USD}}}}", name, key));
  }
  return it->second;
}

}  // namespace

const Price& PriceCatalog::gpu(const std::string& name) const { return find_price(gpus, "gpus", name); }
const Price& PriceCatalog::server(const std::string& form) const { return find_price(servers, "servers", form); }
const Price& PriceCatalog::nic(const std::string& name) const { return find_price(nics, "nics", name); }
const Price& PriceCatalog::network_switch(const std::string& name) const {
  return find_price(switches, "switches", name);
}
const Price& PriceCatalog::cloud_gpu(const std::string& name) const { return find_price(cloud, "cloud", name); }
const Price& PriceCatalog::optic(double gbps) const {
  for (const auto& [speed, p] : optics) {
    if (speed + 0.5 >= gbps) return p;
  }
  if (optics.empty()) {
    throw InputError({}, "prices.optics", "no optics in the price catalog",
                     "add one to the plan: prices: {optics: {400: USD}}");
  }
  return optics.rbegin()->second;
}

PriceCatalog parse_prices(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields top(root, file, "",
                   {"currency", "gpus", "servers", "nics", "switches", "optics", "storage", "racks", "electricity",
                    "cloud", "lifetime", "power"});
  if (top.has("currency") && top.text("currency") != "USD") top.fail("currency", "only USD prices are read", "USD");
  PriceCatalog c;
  read_section(root, file, "gpus", {"name", "usd", "power_W", "date", "source", "note", "estimate"}, "usd", c.gpus,
               [](const Fields& f) { return f.text("name"); });
  read_section(root, file, "nics", {"name", "usd", "power_W", "date", "source", "note", "estimate"}, "usd", c.nics,
               [](const Fields& f) { return f.text("name"); });
  read_section(root, file, "switches", {"name", "usd", "power_W", "date", "source", "note", "estimate"}, "usd",
               c.switches, [](const Fields& f) { return f.text("name"); });
  if (root["servers"]) {
    const auto items = as_list(root["servers"], file, "servers");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Fields f(items[i], file, fmt::format("servers[{}]", i),
                     {"form", "gpus", "usd", "power_W", "date", "source", "note", "estimate"});
      const std::string form = f.choice("form", {"nvswitch", "nvlink-mesh", "pcie", "workstation"});
      c.servers[form] = read_price(f, "usd");
      (void)f.integer_or("gpus", 1, 64, 8);  // the GPU slots the price is for: checked, informative only
    }
  }
  if (root["optics"]) {
    // One end of a link: a transceiver where one is priced at that speed, else an active optical
    // cable's end, else a copper cable's end.
    std::map<int, int> rank;
    const auto items = as_list(root["optics"], file, "optics");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Fields f(items[i], file, fmt::format("optics[{}]", i),
                     {"gbps", "kind", "usd", "power_W", "date", "source", "note", "estimate"});
      const int gbps = static_cast<int>(f.integer("gbps", 1, kMaxOpticGbps));
      const std::string kind = f.choice("kind", {"transceiver", "aoc", "dac"});
      const int r = kind == "transceiver" ? 3 : kind == "aoc" ? 2 : 1;
      if (rank[gbps] >= r) continue;
      rank[gbps] = r;
      c.optics[gbps] = read_price(f, "usd");
    }
  }
  if (root["storage"]) {
    const auto items = as_list(root["storage"], file, "storage");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Fields f(items[i], file, fmt::format("storage[{}]", i),
                     {"kind", "usd_per_TB", "date", "source", "note", "estimate"});
      c.storage[f.choice("kind", {"nvme", "parallel-fs"})] = read_price(f, "usd_per_TB");
    }
  }
  if (top.has("racks")) {
    const Fields f(top.node("racks"), file, "racks", {"usd", "power_kW", "date", "source", "note", "estimate"});
    c.rack = f.has("usd") ? read_price(f, "usd") : Price{};
    c.rack.power_w = f.positive("power_kW") * 1e3;
    c.rack.date = f.text("date");
    c.rack.source = f.text("source");
  }
  if (top.has("electricity")) {
    const Fields f(top.node("electricity"), file, "electricity", {"usd_per_kWh", "pue", "date", "source", "note"});
    c.electricity = read_price(f, "usd_per_kWh");
    c.pue = f.positive("pue");
    if (c.pue < 1 || c.pue > 3) f.fail("pue", "outside 1 .. 3", "a power usage effectiveness such as 1.1 or 1.58");
  }
  if (root["cloud"]) {
    const auto items = as_list(root["cloud"], file, "cloud");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Fields f(items[i], file, fmt::format("cloud[{}]", i),
                     {"gpu", "usd_per_gpu_hour", "provider", "date", "source", "note", "estimate"});
      Price p = read_price(f, "usd_per_gpu_hour");
      if (f.has("provider")) p.note = f.text("provider") + (p.note.empty() ? "" : "; " + p.note);
      c.cloud[f.text("gpu")] = p;
    }
  }
  if (top.has("lifetime")) {
    const Fields f(top.node("lifetime"), file, "lifetime", {"years", "date", "source", "note"});
    c.lifetime = read_price(f, "years");
  }
  if (top.has("power")) {
    const Fields f(top.node("power"), file, "power", {"gpu_utilisation_fraction", "date", "source", "note"});
    c.utilisation = read_price(f, "gpu_utilisation_fraction");
    if (c.utilisation.usd <= 0 || c.utilisation.usd > 1)
      f.fail("gpu_utilisation_fraction", "outside (0, 1]", "e.g. 0.75");
  }
  if (c.lifetime.usd <= 0) c.lifetime.usd = 5;
  if (c.utilisation.usd <= 0) c.utilisation.usd = 0.75;
  return c;
}

PriceCatalog builtin_prices() {
  if (const auto text = data::find("data/prices/prices.yaml"))
    return parse_prices(std::string(*text), "builtin:data/prices/prices.yaml");
  return {};
}

void apply_price_overrides(PriceCatalog& c, const YAML::Node& overrides, const std::string& file) {
  if (!overrides || overrides.IsNull()) return;
  const Fields top(overrides, file, "prices",
                   {"gpus", "servers", "nics", "switches", "optics", "storage", "cloud", "electricity", "pue",
                    "lifetime_years", "rack_power_kW", "gpu_utilisation_fraction"});
  const std::string source = "the plan (" + file + ")";
  // An entry is a number (USD) or {usd, power_W}.
  auto entries = [&](const char* section, std::map<std::string, Price>& into) {
    if (!top.has(section)) return;
    const YAML::Node n = top.node(section);
    if (!n.IsMap()) top.fail(section, "not a mapping", "name: USD");
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      const std::string field = fmt::format("prices.{}.{}", section, key);
      Price& p = into[key];
      p.source = source;
      p.date = "";
      p.note = "set by the plan";
      p.estimate = false;
      if (kv.second.IsScalar()) {
        // The whole scalar is the number: "30000usd" is refused, not read as 30000 (std::stod
        // stops at the first character it cannot use).
        if (!YAML::convert<double>::decode(kv.second, p.usd) || !std::isfinite(p.usd)) {
          throw InputError(location_of(kv.second, file), field, "got '" + kv.second.Scalar() + "', not a number",
                           "a price in USD as a plain number, e.g. 30000, or {usd: 30000, power_W: 700}");
        }
        if (!(p.usd >= 0) || p.usd > 1e12)
          throw InputError(location_of(kv.second, file), field, "out of range", "0 .. 1e12 USD");
      } else {
        const Fields f(kv.second, file, field, {"usd", "power_W"});
        if (f.has("usd")) p.usd = f.number("usd");
        if (!(p.usd >= 0) || p.usd > 1e12) f.fail("usd", "out of range", "0 .. 1e12 USD");
        if (f.has("power_W")) p.power_w = f.physical("power_W", 1, physical::power);
      }
    }
  };
  entries("gpus", c.gpus);
  if (top.has("servers")) {
    // The server forms priced (the catalog's): another key would be a price nothing reads.
    const std::vector<std::string> forms{"nvswitch", "nvlink-mesh", "pcie", "workstation"};
    const YAML::Node n = top.node("servers");
    for (const auto& kv : n.IsMap() ? n : YAML::Node(YAML::NodeType::Map)) {
      const std::string form = kv.first.Scalar();
      if (std::find(forms.begin(), forms.end(), form) == forms.end()) {
        const std::string near = suggest(form, forms);
        throw InputError(location_of(kv.first, file), "prices.servers." + form,
                         "unknown server form" + (near.empty() ? std::string() : " (did you mean '" + near + "'?)"),
                         join(forms));
      }
    }
  }
  entries("servers", c.servers);
  entries("nics", c.nics);
  entries("switches", c.switches);
  entries("cloud", c.cloud);
  std::map<std::string, Price> storage = c.storage;
  entries("storage", storage);
  for (const auto& [k, v] : storage) {
    if (k != "nvme" && k != "parallel-fs") {
      throw InputError(top.where("storage"), "prices.storage." + k, "unknown storage kind", "nvme, parallel-fs");
    }
  }
  c.storage = storage;
  if (top.has("optics")) {
    // Keys are link speeds in Gb/s, whole numbers as the price catalog's optics give them: "400G"
    // and "-400" are refused at their line, not read as 400 and -400 (std::stol's prefix).
    const YAML::Node n = top.node("optics");
    for (const auto& kv : n.IsMap() ? n : YAML::Node(YAML::NodeType::Map)) {
      const std::string key = kv.first.Scalar();
      double gbps = 0;
      if (!YAML::convert<double>::decode(kv.first, gbps) || gbps != std::floor(gbps) || gbps < 1 ||
          gbps > kMaxOpticGbps) {
        throw InputError(location_of(kv.first, file), "prices.optics." + key, "not a link speed in Gb/s",
                         fmt::format("a whole number of Gb/s from 1 to {}, e.g. 400: USD", kMaxOpticGbps));
      }
    }
    std::map<std::string, Price> optics;
    entries("optics", optics);
    for (const auto& [k, v] : optics) c.optics[static_cast<int>(std::stod(k))] = v;
  }
  if (top.has("electricity")) {
    c.electricity.usd = top.number("electricity");
    if (!(c.electricity.usd >= 0) || c.electricity.usd > 10)
      top.fail("electricity", "out of range", "USD per kWh, 0 .. 10");
    c.electricity.source = source;
    c.electricity.date = "";
  }
  if (top.has("pue")) {
    c.pue = top.number("pue");
    if (!(c.pue >= 1) || c.pue > 3) top.fail("pue", "outside 1 .. 3", "e.g. 1.1 or 1.58");
  }
  if (top.has("lifetime_years")) {
    c.lifetime.usd = top.positive("lifetime_years");
    if (c.lifetime.usd > 30) top.fail("lifetime_years", "above 30", "years of depreciation, e.g. 5");
    c.lifetime.source = source;
  }
  if (top.has("rack_power_kW")) {
    c.rack.power_w = top.positive("rack_power_kW") * 1e3;
    c.rack.source = source;
  }
  if (top.has("gpu_utilisation_fraction")) {
    c.utilisation.usd = top.fraction("gpu_utilisation_fraction");
    c.utilisation.source = source;
  }
}

}  // namespace gf::plan
