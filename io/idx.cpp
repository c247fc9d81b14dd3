// IDX reading and writing through zlib, which reads raw files transparently as well as gzip ones.
#include "io/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/machine_memory.hpp"

namespace psgrad {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr std::uint64_t kMaxPixelsPerImage = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 28;
// The largest IDX file read, raw or gzip: EMNIST's biggest set is 0.6 GiB, ten times that leaves
// room. Declared payloads have the same bound, so a small gzip bomb cannot fill memory either.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{6} << 30;
constexpr std::uint64_t kMaxPayloadBytes = kMaxFileBytes;
constexpr std::uint64_t kTrailingBytesCounted = std::uint64_t{1} << 20;
// zlib counts in unsigned int; bounded chunks also keep memory growth proportional to the data read.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

std::uint32_t big_endian_u32(const std::uint8_t* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

void append_big_endian_u32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 24));
  out.push_back(static_cast<std::uint8_t>(value >> 16));
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value));
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Error file_error(const std::string& path, const std::string& fault) {
  return Error{fmt::format("{}: {}", path, fault)};
}

// One IDX file being read front to back, remembering zlib's complaint if decompression fails.
class IdxReader {
 public:
  static Result<IdxReader> open(const std::string& path) {
    if (auto missing = missing_path(path)) return *missing;
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status)) return file_error(path, "is a directory, not an IDX file");
    auto checked = open_checked_file(path, "IDX file", kMaxFileBytes);
    if (!checked) return Error{checked.error()};
    errno = 0;
    GzFile file(gzdopen(checked->fd(), "rb"));
    if (!file) {
      return file_error(path, fmt::format("cannot open: {}", errno ? std::strerror(errno) : "out of memory"));
    }
    checked->release();  // zlib closes it now
    gzbuffer(file.get(), 128 * 1024);  // fewer system calls for the 47 MB MNIST training images
    return IdxReader(path, std::move(file));
  }

  // Reads up to `wanted` bytes onto the end of `out`; fewer only at the end of the data.
  Status read_append(std::vector<std::uint8_t>& out, std::uint64_t wanted) {
    while (wanted > 0) {
      const auto chunk = static_cast<unsigned>(std::min<std::uint64_t>(wanted, kChunkBytes));
      const std::size_t old_size = out.size();
      out.resize(old_size + chunk);
      const int got = gzread(file_.get(), out.data() + old_size, chunk);
      if (got < 0) {
        out.resize(old_size);
        return read_failure();
      }
      out.resize(old_size + static_cast<std::size_t>(got));
      wanted -= static_cast<std::uint64_t>(got);
      if (static_cast<unsigned>(got) < chunk) break;  // end of data
    }
    return success();
  }

  // Counts whatever follows the declared data, which a well-formed file does not have, up to just
  // past `limit`: a gzip bomb's tail is not worth decompressing to the end.
  Result<std::uint64_t> count_remaining_bytes(std::uint64_t limit) {
    std::array<std::uint8_t, 64 * 1024> scratch;
    std::uint64_t total = 0;
    while (total <= limit) {
      const int got = gzread(file_.get(), scratch.data(), static_cast<unsigned>(scratch.size()));
      if (got < 0) return read_failure();
      if (got == 0) return total;
      total += static_cast<std::uint64_t>(got);
    }
    return total;
  }

  // zlib reports a gzip stream that stops mid-way as a plain end of file; this tells them apart.
  bool gzip_stream_cut_short() const {
    int code = Z_OK;
    gzerror(file_.get(), &code);
    return code == Z_BUF_ERROR;
  }

  const std::string& path() const { return path_; }

 private:
  IdxReader(std::string path, GzFile file) : path_(std::move(path)), file_(std::move(file)) {}

  Error read_failure() const {
    int code = Z_OK;
    const char* message = gzerror(file_.get(), &code);
    if (code == Z_ERRNO) return file_error(path_, fmt::format("read failed: {}", std::strerror(errno)));
    return file_error(path_, fmt::format("corrupt gzip data: {}", message ? message : "unknown zlib error"));
  }

  std::string path_;
  GzFile file_;
};

std::string describe_magic_mismatch(std::uint32_t magic, std::uint32_t expected, const char* kind) {
  std::string text = fmt::format("wrong magic 0x{:08x}, expected 0x{:08x} ({})", magic, expected, kind);
  if (magic == kImagesMagic) text += "; this is an IDX images file";
  if (magic == kLabelsMagic) text += "; this is an IDX labels file";
  if (magic == __builtin_bswap32(expected)) text += "; byte-swapped? IDX headers are big-endian";
  return text;
}

// Reads the dimension words after checking the magic; `kind` only shapes messages.
Result<std::vector<std::uint32_t>> read_header(IdxReader& reader, std::uint32_t expected_magic,
                                               std::size_t dimensions, const char* kind) {
  const std::size_t header_bytes = 4 * (1 + dimensions);
  std::vector<std::uint8_t> header;
  header.reserve(header_bytes);
  if (auto read = reader.read_append(header, header_bytes); !read) return Error{read.error()};
  if (header.size() >= 4) {
    const std::uint32_t magic = big_endian_u32(header.data());
    if (magic != expected_magic) {
      return file_error(reader.path(), describe_magic_mismatch(magic, expected_magic, kind));
    }
  }
  if (header.size() < header_bytes) {
    if (reader.gzip_stream_cut_short()) {
      return file_error(reader.path(), fmt::format("truncated: the gzip stream is cut short within the {}-byte "
                                                   "{} header",
                                                   header_bytes, kind));
    }
    if (header.empty()) return file_error(reader.path(), fmt::format("empty file, expected {}", kind));
    return file_error(reader.path(), fmt::format("truncated: {} bytes, shorter than the {}-byte {} header",
                                                 header.size(), header_bytes, kind));
  }
  std::vector<std::uint32_t> words;
  for (std::size_t i = 1; i <= dimensions; ++i) words.push_back(big_endian_u32(header.data() + 4 * i));
  return words;
}

// Reads exactly `expected` payload bytes and insists that nothing follows them.
Status read_payload(IdxReader& reader, std::vector<std::uint8_t>& out, std::uint64_t expected,
                    const std::string& declared) {
  // Reserve no more than a sane amount up front: a lying header must not cause a huge allocation.
  out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(expected, std::uint64_t{1} << 27)));
  try {
    if (auto read = reader.read_append(out, expected); !read) return read;
  } catch (const std::bad_alloc&) {
    return file_error(reader.path(), fmt::format("not enough memory for the {} ({})", declared,
                                                 memory_size_text(static_cast<double>(expected))));
  }
  if (out.size() < expected) {
    return file_error(reader.path(),
                      fmt::format("truncated: header declares {} ({} bytes) but only {} bytes follow{}",
                                  declared, expected, out.size(),
                                  reader.gzip_stream_cut_short() ? " (the gzip stream is cut short)" : ""));
  }
  auto extra = reader.count_remaining_bytes(kTrailingBytesCounted);
  if (!extra) return Error{extra.error()};
  if (*extra > 0) {
    return file_error(reader.path(), fmt::format("{}{} unexpected trailing bytes after the {} ({} bytes) "
                                                 "the header declares",
                                                 *extra > kTrailingBytesCounted ? "more than " : "",
                                                 std::min(*extra, kTrailingBytesCounted), declared, expected));
  }
  return success();
}

Status check_count(const std::string& path, std::uint64_t count, const char* what) {
  if (count == 0) return file_error(path, fmt::format("bad header: 0 {}", what));
  if (count > kMaxCount) {
    return file_error(path, fmt::format("bad header: {} {} exceeds the limit of {}", count, what, kMaxCount));
  }
  return success();
}

// gzip when path ends in .gz; "T" writes the bytes as they are, so both kinds go through the same code.
// zlib gets its own copy of the descriptor: gzclose closes it, and the caller still has to fsync.
Status write_through_zlib(int fd, const std::string& path, const std::vector<std::uint8_t>& header,
                          const std::vector<std::uint8_t>& payload) {
  const int zlib_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (zlib_fd < 0) return Error{fmt::format("dup: {}", std::strerror(errno))};
  errno = 0;
  GzFile file(gzdopen(zlib_fd, ends_with(path, ".gz") ? "wb6" : "wbT"));
  if (!file) {
    const int error = errno;
    ::close(zlib_fd);
    return Error{fmt::format("zlib: {}", error ? std::strerror(error) : "out of memory")};
  }
  auto write_all = [&](const std::vector<std::uint8_t>& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - done, kChunkBytes));
      if (gzwrite(file.get(), bytes.data() + done, chunk) != static_cast<int>(chunk)) return false;
      done += chunk;
    }
    return true;
  };
  const bool written = write_all(header) && write_all(payload);
  std::string fault;
  if (!written) {
    int code = Z_OK;
    const char* message = gzerror(file.get(), &code);
    fault = code == Z_ERRNO ? std::strerror(errno) : (message ? message : "zlib error");
  }
  const int close_code = gzclose(file.release());
  if (written && close_code != Z_OK) fault = close_code == Z_ERRNO ? std::strerror(errno) : "zlib error on close";
  if (!fault.empty()) return Error{"write: " + fault};
  return success();
}

// Writes header and payload (gzip when path ends in .gz) so that path is never half-written.
Status write_idx_file(const std::string& path, const std::vector<std::uint8_t>& header,
                      const std::vector<std::uint8_t>& payload) {
  return write_file_atomically(path, "IDX file", [&](int fd) { return write_through_zlib(fd, path, header, payload); });
}

// Reads and checks the images header, leaving the reader at the first pixel.
Result<IdxImagesHeader> read_images_header(IdxReader& reader) {
  const auto& path = reader.path();
  auto header = read_header(reader, kImagesMagic, 3, "IDX images");
  if (!header) return Error{header.error()};
  const std::uint64_t count = (*header)[0], rows = (*header)[1], cols = (*header)[2];
  if (rows == 0 || cols == 0) {
    return file_error(path, fmt::format("bad header: images of {}x{} (both sizes must be nonzero)", rows, cols));
  }
  if (rows * cols > kMaxPixelsPerImage) {
    return file_error(path, fmt::format("bad header: images of {}x{} exceed the limit of {} pixels", rows, cols,
                                        kMaxPixelsPerImage));
  }
  if (auto checked = check_count(path, count, "images"); !checked) return Error{checked.error()};
  if (count * rows * cols > kMaxPayloadBytes) {
    return file_error(path, fmt::format("bad header: {} images of {}x{} are {}, more than the limit of {}", count,
                                        rows, cols, memory_size_text(static_cast<double>(count * rows * cols)),
                                        memory_size_text(static_cast<double>(kMaxPayloadBytes))));
  }
  return IdxImagesHeader{count, rows, cols};
}

}  // namespace

Result<IdxImagesHeader> read_idx_images_header(const std::string& path) {
  auto opened = IdxReader::open(path);
  if (!opened) return Error{opened.error()};
  return read_images_header(*opened);
}

Result<IdxImages> read_idx_images(const std::string& path) {
  auto opened = IdxReader::open(path);
  if (!opened) return Error{opened.error()};
  IdxReader& reader = *opened;
  auto header = read_images_header(reader);
  if (!header) return Error{header.error()};
  IdxImages images;
  images.count = header->count;
  images.rows = header->rows;
  images.cols = header->cols;
  const std::string declared = fmt::format("{} images of {}x{}", images.count, images.rows, images.cols);
  if (auto read = read_payload(reader, images.pixels, images.count * images.rows * images.cols, declared); !read) {
    return Error{read.error()};
  }
  return images;
}

Result<IdxLabels> read_idx_labels(const std::string& path) {
  auto opened = IdxReader::open(path);
  if (!opened) return Error{opened.error()};
  IdxReader& reader = *opened;
  auto header = read_header(reader, kLabelsMagic, 1, "IDX labels");
  if (!header) return Error{header.error()};
  const std::uint64_t count = (*header)[0];
  if (auto checked = check_count(path, count, "labels"); !checked) return Error{checked.error()};

  IdxLabels labels;
  if (auto read = read_payload(reader, labels.labels, count, fmt::format("{} labels", count)); !read) {
    return Error{read.error()};
  }
  return labels;
}

Status write_idx_images(const std::string& path, const IdxImages& images) {
  // Refuse what read_idx_images would refuse, so a written file always reads back.
  if (images.count == 0 || images.rows == 0 || images.cols == 0 || images.count > kMaxCount ||
      images.rows > kMaxPixelsPerImage || images.cols > kMaxPixelsPerImage ||
      images.rows * images.cols > kMaxPixelsPerImage) {
    return file_error(path, fmt::format("cannot write {} images of {}x{}: sizes must be nonzero and within "
                                        "IDX limits",
                                        images.count, images.rows, images.cols));
  }
  if (images.pixels.size() != images.count * images.rows * images.cols) {
    return file_error(path, fmt::format("cannot write: {} images of {}x{} need {} pixel bytes, got {}",
                                        images.count, images.rows, images.cols,
                                        images.count * images.rows * images.cols, images.pixels.size()));
  }
  std::vector<std::uint8_t> header;
  append_big_endian_u32(header, kImagesMagic);
  append_big_endian_u32(header, static_cast<std::uint32_t>(images.count));
  append_big_endian_u32(header, static_cast<std::uint32_t>(images.rows));
  append_big_endian_u32(header, static_cast<std::uint32_t>(images.cols));
  return write_idx_file(path, header, images.pixels);
}

Status write_idx_labels(const std::string& path, const IdxLabels& labels) {
  if (labels.labels.empty() || labels.labels.size() > kMaxCount) {
    return file_error(path, fmt::format("cannot write {} labels: the count must be nonzero and within IDX limits",
                                        labels.labels.size()));
  }
  std::vector<std::uint8_t> header;
  append_big_endian_u32(header, kLabelsMagic);
  append_big_endian_u32(header, static_cast<std::uint32_t>(labels.labels.size()));
  return write_idx_file(path, header, labels.labels);
}

}  // namespace psgrad
