#pragma once
// Timestamps as sacct prints them ("2024-11-13T13:02:56", local time without a zone) and as
// Kubernetes does (RFC 3339, "2025-03-19T20:40:47Z"). Only differences between two stamps of one
// file reach a trace, so a stamp without a zone is read as UTC.
#include <optional>
#include <string_view>

namespace gf::sched {

// Seconds since 1970-01-01T00:00:00Z of "YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm]"; nullopt when the
// text is not such a date-time (a field, a month or a day out of range included).
std::optional<double> iso_seconds(std::string_view text);

}  // namespace gf::sched
