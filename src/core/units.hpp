#pragma once
// Strong unit types. Bytes, seconds and bandwidth never cross a module boundary as bare
// doubles, so a GB/s can never be added to a microsecond by accident.
#include <compare>

namespace gf {

template <typename Tag>
class Quantity {
public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value_(v) {}
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

private:
  double value_ = 0.0;
};

template <typename Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) {
  return q * k;
}

struct BytesTag {};
struct SecondsTag {};
struct BandwidthTag {};
struct PowerTag {};

using Bytes = Quantity<BytesTag>;
using Seconds = Quantity<SecondsTag>;
using Bandwidth = Quantity<BandwidthTag>;  // bytes per second, one direction
using Watts = Quantity<PowerTag>;

constexpr Bandwidth operator/(Bytes b, Seconds s) { return Bandwidth(b.value() / s.value()); }
constexpr Seconds operator/(Bytes b, Bandwidth bw) { return Seconds(b.value() / bw.value()); }
constexpr Bytes operator*(Bandwidth bw, Seconds s) { return Bytes(bw.value() * s.value()); }

// Constructors named after the units people write. "GB" is decimal (1e9), as in nccl-tests.
constexpr Bytes bytes(double v) { return Bytes(v); }
constexpr Bytes gigabytes(double v) { return Bytes(v * 1e9); }
constexpr Bytes gibibytes(double v) { return Bytes(v * 1073741824.0); }
constexpr Seconds seconds(double v) { return Seconds(v); }
constexpr Seconds microseconds(double v) { return Seconds(v * 1e-6); }
constexpr Seconds nanoseconds(double v) { return Seconds(v * 1e-9); }
constexpr Bandwidth gigabytes_per_second(double v) { return Bandwidth(v * 1e9); }
constexpr Bandwidth gigabits_per_second(double v) { return Bandwidth(v * 1e9 / 8.0); }
constexpr Watts watts(double v) { return Watts(v); }

constexpr double in_GBps(Bandwidth bw) { return bw.value() / 1e9; }
constexpr double in_Gbps(Bandwidth bw) { return bw.value() * 8.0 / 1e9; }
constexpr double in_us(Seconds s) { return s.value() * 1e6; }
constexpr double in_ns(Seconds s) { return s.value() * 1e9; }
constexpr double in_GB(Bytes b) { return b.value() / 1e9; }

}  // namespace gf
