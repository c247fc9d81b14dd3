// Reads and writes model.psgrad files byte by byte, so the format is the same on every machine.
#include "io/model_file.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/byte_fields.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

// Strings longer than this are a corrupt length field, not a real config.
constexpr std::uint64_t kMaxStringBytes = std::uint64_t{1} << 26;
constexpr std::uint64_t kMaxWeights = kMaxStringBytes * 64;
// The largest file those bounds allow: three strings, the weights and the fixed fields.
constexpr std::uint64_t kMaxModelFileBytes = 3 * (kMaxStringBytes + 8) + kMaxWeights * 4 + 4096;

std::string encode(const ModelFileHeader& header, const float* weights, std::size_t weight_count) {
  ByteWriter out;
  out.raw(model_file_magic, sizeof model_file_magic);
  out.u32(header.format_version);
  out.u64(header.weights_version);
  out.u64(header.input_width);
  out.u64(header.num_classes);
  out.u64(header.image_rows);
  out.u64(header.image_cols);
  out.text(header.architecture);
  out.text(header.config_text);
  out.text(header.layout_description);
  out.u64(header.layout_hash);
  out.u64(weight_count);
  for (std::size_t i = 0; i < weight_count; ++i) out.f32(weights[i]);
  out.u64(fnv1a(out.bytes().data(), out.bytes().size()));
  return out.bytes();
}

}  // namespace

Status write_model_file(const std::string& path, const ModelFileHeader& header, const float* weights,
                        std::size_t weight_count) {
  if (weight_count > 0 && !weights) return Error{fmt::format("{}: no weights to save", path)};
  return write_file_atomically(path, "model file", encode(header, weights, weight_count));
}

Result<ModelFileContents> read_model_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Error{fmt::format("{}: is a folder, not a model file", path)};
  auto read = read_checked_file(path, "model file", kMaxModelFileBytes);
  if (!read) return Error{read.error()};
  const std::string& bytes = *read;

  const std::size_t magic_size = sizeof model_file_magic;
  const bool magic_prefix_matches =
      std::memcmp(bytes.data(), model_file_magic, std::min(bytes.size(), magic_size)) == 0;
  if (bytes.empty()) return Error{fmt::format("{}: truncated model file: the file is empty", path)};
  if (!magic_prefix_matches)
    return Error{fmt::format("{}: not a psgrad model file (wrong magic; expected \"PSGRADMF\")", path)};
  if (bytes.size() < magic_size)
    return Error{fmt::format("{}: truncated model file: {} bytes, shorter than the magic", path, bytes.size())};

  ByteReader in(bytes, kMaxStringBytes, kMaxWeights);
  in.skip(magic_size, "magic");
  ModelFileContents contents;
  auto& header = contents.header;
  header.format_version = in.u32("format version");
  if (!in.failed() && header.format_version != model_file_format_version)
    return Error{fmt::format("{}: unsupported model file format version {}; this psgrad reads version {}", path,
                             header.format_version, model_file_format_version)};
  header.weights_version = in.u64("weights version");
  header.input_width = in.u64("input width");
  header.num_classes = in.u64("class count");
  header.image_rows = in.u64("image rows");
  header.image_cols = in.u64("image cols");
  header.architecture = in.text("architecture name");
  header.config_text = in.text("stored config");
  header.layout_description = in.text("layout description");
  header.layout_hash = in.u64("layout hash");
  const auto weight_count = in.u64("weight count");
  if (!in.failed()) in.floats(contents.weights, weight_count, "the weights");
  const auto checked_size = in.offset();
  const auto stored_checksum = in.u64("checksum");
  if (!in.truncated().empty()) return Error{fmt::format("{}: truncated model file: {}", path, in.truncated())};
  if (!in.corrupt().empty()) return Error{fmt::format("{}: corrupted model file: {}", path, in.corrupt())};
  if (stored_checksum != fnv1a(bytes.data(), checked_size))
    return Error{fmt::format("{}: corrupted model file: checksum mismatch", path)};
  if (in.offset() != bytes.size())
    return Error{fmt::format("{}: corrupted model file: {} unexpected bytes after the checksum", path,
                             bytes.size() - in.offset())};
  return contents;
}

}  // namespace psgrad
