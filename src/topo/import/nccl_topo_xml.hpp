#pragma once
// `gpufabric import nccl-topo`: NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes, and the
// NCCL_TOPO_FILE files cloud images ship, which name devices by PCI class only) as a cluster
// file. The mapping and its defaults: docs/import-format.md.
#include <string>

#include "hw/catalog.hpp"
#include "topo/import/imported_design.hpp"

namespace gf::topo::import {

// The design the file describes, with a note on everything it leaves out. Malformed XML, a
// device of a class NCCL does not write, or a file without GPUs is an InputError at its line.
ImportedDesign read_nccl_topo(const std::string& text, const std::string& file, const hw::Catalog& catalog);

ImportedCluster import_nccl_topo(const std::string& text, const std::string& file, const hw::Catalog& catalog,
                                 const ImportOptions& options);

}  // namespace gf::topo::import
