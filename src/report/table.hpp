#pragma once
// A plain-text table with aligned columns. Written by hand: the table libraries people use
// (tabulate, libfort) are not packaged in Debian, and this needs only padding.
#include <string>
#include <vector>

namespace gf::report {

class TextTable {
public:
  enum class Align { left, right };

  explicit TextTable(std::vector<std::string> header, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  // Rendered with `indent` spaces before each line and two spaces between columns.
  [[nodiscard]] std::string render(int indent = 0) const;

private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point number without trailing noise, e.g. 375.75 -> "375.8" with one decimal.
std::string fixed(double v, int decimals);

// A duration in the unit a person reads it in, for summaries beside a column that keeps µs as
// nccl-tests does: "850 ns", "12.5 us", "3.20 ms", "4.75 s", "12.3 min", "5.2 h", "3.1 days".
std::string human_duration(double seconds);

}  // namespace gf::report
