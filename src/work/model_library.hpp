#pragma once
// The built-in model library (data/models/*.yaml, docs/model-format.md) and model files in the
// same format: each read into a ModelSpec, a malformed field an InputError at file:line.
#include <string>
#include <vector>

#include "work/model_spec.hpp"

namespace gf::work {

struct LibraryEntry {
  std::string name;
  std::string display_name;
  std::string kind;
  double params = 0;  // as published
  std::string source;
};

// The library, in name order.
std::vector<LibraryEntry> model_library();
// A model of the library; an unknown name is an InputError naming `flag` with the names.
ModelSpec library_model(const std::string& name, const std::string& flag = "--model");
// A model file of the library's format.
ModelSpec model_from_file(const std::string& path);
ModelSpec parse_model(const std::string& text, const std::string& file);

}  // namespace gf::work
