#pragma once
// The error band printed beside every headline figure (issue 35): how far measured values of
// rows like the user's fell from what gpufabric predicted for them, on rows from sources that set
// no model constant (leave-one-source-out). A band is the 2.5th..97.5th percentile of
// measured / predicted a new source would show, from the held-out validation rows of one class (a GPU family and model
// kind for training, a metric and GPU family for serving, a size band and fabric for
// collectives). Where a class has fewer than kMinRows such rows it is "unvalidated": no interval
// is invented.
//
// The table of bands is generated from the validation suites (`gpufabric validate --bands`) and
// embedded as data/validation/error_bands.yaml; a test checks that it matches the model.
#include <string>
#include <string_view>
#include <vector>

namespace gf::band {

// The interval's level: the 2.5th..97.5th percentile of what a new source would show (two
// levels, see validate/generalisation.cpp). Chosen so that bands computed without a source cover
// about 90% of that source's rows over the three suites (88%: training 84%, serving 89%,
// collectives 90%, `validate` prints it); the 5th..95th percentile covered 84%. The fewest rows
// and sources a band is computed from: a user's cluster is a new source, so the band must carry how sources differ,
// which one or two sources cannot show.
inline constexpr double kCoverage = 0.95;
inline constexpr int kMinRows = 8;
inline constexpr int kMinSources = 3;

struct Band {
  std::string suite;  // training | serving | collectives
  std::string cls;    // the class the rows came from, e.g. "H100 dense 3-30B"
  int rows = 0;       // held-out rows of that class
  int sources = 0;    // the sources they come from
  // Percentiles of measured / predicted on the class's quantity: a rate for training and
  // serving throughput (tokens/s), a time for serving latencies and for collectives (nccl-tests'
  // time column; a row judged on bus bandwidth counts as the time that bandwidth gives).
  double ratio_low = 1.0;
  double ratio_high = 1.0;
  [[nodiscard]] bool validated() const { return rows >= kMinRows && sources >= kMinSources; }
};

// How a printed quantity moves with the band's metric: `same` for the metric itself (tokens/s
// banded by throughput rows), `inverse` for its reciprocal (a step time banded by throughput
// rows: a model 10% fast predicts a step 10% short).
enum class Direction { same, inverse };

struct Interval {
  double low = 0;            // the quantity's value at the band's low end
  double high = 0;           // and at its high end
  double low_fraction = 0;   // (low - predicted) / predicted
  double high_fraction = 0;  // (high - predicted) / predicted
};

Interval interval(const Band& b, double predicted, Direction d);

// "(-8% .. +21%; 38 rows like this: H100 dense 3-30B)", or "(unvalidated: 3 rows like this: ...)".
std::string describe(const Band& b, Direction d);

// "-8%..+21% (38)" or "unvalidated (3)": for a table column.
std::string describe_short(const Band& b, Direction d);

// The bands computed from the embedded validation suites.
class BandTable {
public:
  explicit BandTable(std::vector<Band> bands) : bands_(std::move(bands)) {}
  static const BandTable& builtin();
  // The first class of `classes` (most specific first) with enough rows; otherwise the most
  // specific class, unvalidated, with the rows it has.
  [[nodiscard]] Band lookup(std::string_view suite, const std::vector<std::string>& classes) const;
  [[nodiscard]] const std::vector<Band>& bands() const { return bands_; }

private:
  std::vector<Band> bands_;
};

// Parses the table's YAML (`file` names it in errors).
BandTable parse_band_table(const std::string& text, const std::string& file);

}  // namespace gf::band
