#pragma once
// A refused command-line flag: the training step's phases check their part of the request and
// say which flag is wrong and what would do (no file or line: the request came from flags).
#include <string>

#include "core/error.hpp"

namespace gf::work {

inline void refuse_if(bool refused, const std::string& flag, const std::string& what, const std::string& valid) {
  if (refused) throw InputError({}, flag, what, valid);
}

}  // namespace gf::work
