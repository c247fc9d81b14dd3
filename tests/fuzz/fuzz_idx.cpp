// libFuzzer target: arbitrary bytes, raw and gzip-wrapped, through read_idx_images and read_idx_labels.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "io/idx.hpp"
#include "tests/fuzz/temp_input_file.hpp"

namespace {

// The readers detect gzip by its magic bytes, so the fuzzer's raw bytes already reach the corrupt-gzip
// paths; wrapping them in a valid gzip stream also lets mutated headers and payloads reach the
// decompressing read path.
std::vector<std::uint8_t> gzip(const std::uint8_t* data, std::size_t size) {
  z_stream stream{};
  if (deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<std::uint8_t> out(deflateBound(&stream, size));
  stream.next_in = const_cast<std::uint8_t*>(data);
  stream.avail_in = static_cast<uInt>(size);
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// Every result, error or not, must be well-formed; the sanitizers catch everything else.
void read_both(const std::string& path) {
  if (auto images = psgrad::read_idx_images(path)) {
    if (images->pixels.size() != images->count * images->rows * images->cols) std::abort();
  } else if (images.error().empty()) {
    std::abort();
  }
  if (auto labels = psgrad::read_idx_labels(path); !labels && labels.error().empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static psgrad::fuzz::TempInputFile raw("input.idx");
  static psgrad::fuzz::TempInputFile compressed("input.idx.gz");
  read_both(raw.write(data, size));
  const auto wrapped = gzip(data, size);
  read_both(compressed.write(wrapped.data(), wrapped.size()));
  return 0;
}
