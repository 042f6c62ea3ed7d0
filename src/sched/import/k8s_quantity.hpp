#pragma once
// Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity): a decimal number with an
// optional SI suffix (n u m k M G T P E: powers of 1000), binary suffix (Ki Mi Gi Ti Pi Ei: powers
// of 1024) or exponent ("1e3"), e.g. "1900m" CPUs, "16367668Ki" bytes, "64G".
#include <optional>
#include <string_view>

namespace gf::sched {

// The quantity in base units (cores, bytes, devices); nullopt when the text is not a quantity or
// is negative.
std::optional<double> k8s_quantity(std::string_view text);

}  // namespace gf::sched
