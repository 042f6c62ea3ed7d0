#pragma once
// `gpufabric import topo-m`: the text `nvidia-smi topo -m` prints (the GPU/NIC matrix of NV#,
// PIX, PXB, PHB, NODE, SYS, its CPU and NUMA affinity columns and the NIC legend) as a cluster
// file. The text names no model, so the GPU, CPU and network come from flags or stated
// defaults. The mapping: docs/import-format.md.
#include <string>

#include "hw/catalog.hpp"
#include "topo/import/imported_design.hpp"

namespace gf::topo::import {

// The design the matrix implies. A truncated matrix, a row with the wrong number of entries or
// an entry outside the legend is an InputError at its line.
ImportedDesign read_topo_matrix(const std::string& text, const std::string& file, const hw::Catalog& catalog);

ImportedCluster import_topo_matrix(const std::string& text, const std::string& file, const hw::Catalog& catalog,
                                   const ImportOptions& options);

}  // namespace gf::topo::import
