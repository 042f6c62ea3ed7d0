#include "probe/decode.hpp"

#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace gf::probe {

namespace {

using Clock = std::chrono::steady_clock;

struct TjHandle {
  tjhandle h;
  explicit TjHandle(bool compress) : h(compress ? tjInitCompress() : tjInitDecompress()) {
    if (!h) throw std::runtime_error("libjpeg-turbo: cannot create a handle");
  }
  ~TjHandle() { tjDestroy(h); }
  TjHandle(const TjHandle&) = delete;
  TjHandle& operator=(const TjHandle&) = delete;
};

// Runs `work` (returning units done per call) on `threads` threads until `duration` has passed;
// returns units per second over the span from the first start to the last finish.
template <typename Work>
double rate(int threads, Seconds duration, Work make_work) {
  std::vector<double> done(static_cast<std::size_t>(threads), 0.0);
  std::vector<Clock::time_point> end(static_cast<std::size_t>(threads));
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration.value()));
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        // An exception must not leave a worker thread (that would terminate the program).
        try {
          auto work = make_work();
          double n = 0;
          do {
            n += work();
          } while (Clock::now() < deadline);
          done[static_cast<std::size_t>(t)] = n;
        } catch (...) {
          const std::lock_guard lock(error_mutex);
          error = std::current_exception();
        }
        end[static_cast<std::size_t>(t)] = Clock::now();
      });
    }
  }
  if (error) std::rethrow_exception(error);
  double total = 0;
  for (double d : done) total += d;
  const auto last = *std::max_element(end.begin(), end.end());
  return total / std::chrono::duration<double>(last - start).count();
}

std::vector<unsigned char> synthetic_rgb(int w, int h) {
  // Low-frequency shapes plus moderate texture: compresses like a photograph (tens of KB at
  // quality 90), unlike a flat gradient (a few KB) or pure noise (hundreds of KB).
  std::vector<unsigned char> rgb(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3);
  std::uint32_t x = 2463534242u;
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      const double base = 128 + 70 * std::sin(i / 23.0) * std::cos(j / 31.0) + 30 * std::sin((i + j) / 7.0);
      for (int c = 0; c < 3; ++c) {
        const double noise = static_cast<double>((x >> (8 * c)) & 0x1f) - 16.0;
        const double v = base + 25 * c * std::cos(i / 50.0) + noise;
        rgb[(static_cast<std::size_t>(j) * static_cast<std::size_t>(w) + static_cast<std::size_t>(i)) * 3 +
            static_cast<std::size_t>(c)] = static_cast<unsigned char>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return rgb;
}

}  // namespace

std::vector<unsigned char> synthetic_jpeg(int width, int height, int quality) {
  const auto rgb = synthetic_rgb(width, height);
  TjHandle tj(true);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj.h, rgb.data(), width, 0, height, TJPF_RGB, &out, &size, TJSAMP_420, quality, 0) != 0) {
    throw std::runtime_error(std::string("tjCompress2: ") + tjGetErrorStr2(tj.h));
  }
  std::vector<unsigned char> jpeg(out, out + size);
  tjFree(out);
  return jpeg;
}

std::vector<unsigned char> decode_jpeg(const std::vector<unsigned char>& jpeg, int& width, int& height) {
  TjHandle tj(false);
  int subsamp = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(tj.h, jpeg.data(), jpeg.size(), &width, &height, &subsamp, &colorspace) != 0) {
    throw std::runtime_error(std::string("tjDecompressHeader3: ") + tjGetErrorStr2(tj.h));
  }
  std::vector<unsigned char> rgb(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  if (tjDecompress2(tj.h, jpeg.data(), jpeg.size(), rgb.data(), width, 0, height, TJPF_RGB, 0) != 0) {
    throw std::runtime_error(std::string("tjDecompress2: ") + tjGetErrorStr2(tj.h));
  }
  return rgb;
}

DecodeResult measure_decode(const DecodeOptions& options) {
  DecodeResult r;
  r.width = options.width;
  r.height = options.height;
  r.quality = options.quality;
  const int threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  r.threads = threads;
  const auto jpeg = synthetic_jpeg(options.width, options.height, options.quality);
  r.jpeg_size = Bytes(static_cast<double>(jpeg.size()));

  auto jpeg_work = [&] {
    return [&, tj = std::make_shared<TjHandle>(false),
            rgb = std::vector<unsigned char>(static_cast<std::size_t>(options.width) *
                                             static_cast<std::size_t>(options.height) * 3)]() mutable {
      if (tjDecompress2(tj->h, jpeg.data(), jpeg.size(), rgb.data(), options.width, 0, options.height, TJPF_RGB, 0) !=
          0) {
        throw std::runtime_error(std::string("tjDecompress2: ") + tjGetErrorStr2(tj->h));
      }
      return 1.0;
    };
  };
  r.jpeg_per_core = ImageRate(rate(1, options.duration, jpeg_work));
  r.jpeg_all_cores = ImageRate(rate(threads, options.duration, jpeg_work));

  // zlib: the decoded pixels tiled to 4 MiB, deflated at the default level 6, inflated whole.
  int w = 0, h = 0;
  const auto pixels = decode_jpeg(jpeg, w, h);
  std::vector<unsigned char> plain(4u << 20);
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = pixels[i % pixels.size()];
  uLongf packed_size = compressBound(static_cast<uLong>(plain.size()));
  std::vector<unsigned char> packed(packed_size);
  if (compress2(packed.data(), &packed_size, plain.data(), static_cast<uLong>(plain.size()), 6) != Z_OK) {
    throw std::runtime_error("zlib compress2 failed");
  }
  packed.resize(packed_size);
  r.deflate_ratio = static_cast<double>(plain.size()) / static_cast<double>(packed.size());
  auto inflate_work = [&] {
    return [&, out = std::vector<unsigned char>(plain.size())]() mutable {
      uLongf out_size = static_cast<uLongf>(out.size());
      if (uncompress(out.data(), &out_size, packed.data(), static_cast<uLong>(packed.size())) != Z_OK ||
          out_size != plain.size()) {
        throw std::runtime_error("zlib uncompress failed");
      }
      return static_cast<double>(out_size);
    };
  };
  r.inflate_per_core = Bandwidth(rate(1, options.duration, inflate_work));
  r.inflate_all_cores = Bandwidth(rate(threads, options.duration, inflate_work));
  return r;
}

}  // namespace gf::probe
