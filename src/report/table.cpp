#include "report/table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gf::report {

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  align_.resize(header_.size(), Align::right);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(int indent) const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    std::string s(static_cast<std::size_t>(indent), ' ');
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i > 0) s += "  ";
      const std::size_t pad = width[i] - r[i].size();
      if (align_[i] == Align::right)
        s += std::string(pad, ' ') + r[i];
      else
        s += r[i] + (i + 1 < r.size() ? std::string(pad, ' ') : "");
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return out;
}

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  const double s = seconds;
  auto three = [](double v, const char* unit) {  // three significant digits
    return fmt::format("{:.{}f} {}", v, v < 10 ? 2 : v < 100 ? 1 : 0, unit);
  };
  if (s < 1e-6) return three(s * 1e9, "ns");
  if (s < 1e-3) return three(s * 1e6, "us");
  if (s < 1) return three(s * 1e3, "ms");
  if (s < 60) return three(s, "s");
  if (s < 3600) return three(s / 60, "min");
  if (s < 86400) return three(s / 3600, "h");
  return three(s / 86400, "days");
}

}  // namespace gf::report
