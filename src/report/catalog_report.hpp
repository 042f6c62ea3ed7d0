#pragma once
// `gpufabric catalog`: every catalog entry with its source, as text tables or as JSON. Both come
// from one pass over the catalog, so the JSON has an entry for each table row, with every field
// of the entry (units in the key: _GBps, _Gbps, _us, _ns, _W, _MiB) and its source.
#include <string>

#include <nlohmann/json.hpp>

#include "hw/catalog.hpp"

namespace gf::report {

struct CatalogReport {
  std::string text;  // the sections "GPUs:", "Networks:", "Links:", "NICs, switches, storage, CPUs:"
  // gpus, networks, links (PCIe and NVLink generations, the "Links" table), nics, switches,
  // storage, cpus (the last four together make the text's last table).
  nlohmann::json json;
};

CatalogReport catalog_report(const hw::Catalog& c);

}  // namespace gf::report
