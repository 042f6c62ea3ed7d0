#pragma once
// Checked numbers from the command line: the whole text must be one finite number within the
// flag's range, else an input error that names the flag, what it got and what would be valid.
// (CLI11 checks types but not ranges in the form our messages give, and std::stod accepts
// "1e3x" up to the x; from_chars reads the whole text or reports where it stopped.)
#include <string>

namespace gf::cli {

// A finite number from `min` to `max` inclusive; `valid` says what would be valid.
double parse_number(const std::string& flag, const std::string& text, double min, double max, const std::string& valid);
// Any finite number.
double parse_finite(const std::string& flag, const std::string& text);
// A number above 0 and at most `max`.
double parse_positive(const std::string& flag, const std::string& text, double max);

}  // namespace gf::cli
