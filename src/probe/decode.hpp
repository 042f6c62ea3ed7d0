#pragma once
// CPU preprocessing rate: real JPEG decodes with libjpeg-turbo and real zlib inflation, on one
// core and on every core at once. The JPEG is generated at startup from a synthetic photo-like
// image (500 x 375, quality 90, 4:2:0: the shape of an average ImageNet training JPEG) so the
// figure does not depend on a data set being present.
#include <vector>

#include "probe/profile.hpp"

namespace gf::probe {

struct DecodeOptions {
  int threads = 0;                  // all-core run; 0 = one per hardware thread
  Seconds duration = seconds(1.0);  // per measurement (one-core and all-core, JPEG and zlib)
  int width = 500;
  int height = 375;
  int quality = 90;
};

DecodeResult measure_decode(const DecodeOptions& options);

// A JPEG of a smooth-plus-texture synthetic image, encoded with tjCompress2.
std::vector<unsigned char> synthetic_jpeg(int width, int height, int quality);

// Decodes to RGB with tjDecompress2; throws std::runtime_error on a corrupt JPEG.
std::vector<unsigned char> decode_jpeg(const std::vector<unsigned char>& jpeg, int& width, int& height);

}  // namespace gf::probe
