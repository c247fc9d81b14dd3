// .npz reading and writing through libzip, which handles zip64 (np.savez forces it), data descriptors,
// deflate and CRC checks.
#include "io/npz_archive.hpp"

#include <zip.h>

#include <algorithm>
#include <new>

#include <fmt/format.h>

#include "io/bounded_file.hpp"
#include "io/machine_memory.hpp"

namespace psgrad {
namespace {

constexpr std::uint64_t kMaxNpzBytes = std::uint64_t{6} << 30;  // the IDX bound
constexpr const char* kMemberSuffix = ".npy";
constexpr std::size_t kChunkBytes = std::size_t{1} << 24;
// Every header numpy writes fits in 64 KiB (format 1.0 cannot say more).
constexpr std::uint64_t kHeaderReadBytes = 64 * 1024 + 10;

std::string zip_open_error(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void NpzArchive::Closer::operator()(::zip* archive) const { zip_discard(archive); }

Result<NpzArchive> NpzArchive::open(const std::string& path) {
  auto file = open_checked_file(path, ".npz file", kMaxNpzBytes);
  if (!file) return Error{file.error()};
  int code = 0;
  ::zip* opened = zip_fdopen(file->fd(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (opened == nullptr)
    return Error{fmt::format("{}: not a readable .npz (zip) archive: {}", path, zip_open_error(code))};
  file->release();  // libzip closes it now
  std::unique_ptr<::zip, Closer> archive(opened);
  std::vector<std::string> names;
  std::map<std::string, unsigned long long> indices;
  const auto entries = zip_get_num_entries(opened, 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* entry = zip_get_name(opened, static_cast<zip_uint64_t>(i), 0);
    if (entry == nullptr) continue;
    std::string name = entry;
    if (!ends_with(name, kMemberSuffix)) continue;  // np.savez writes only .npy members
    name.resize(name.size() - std::string(kMemberSuffix).size());
    names.push_back(name);
    indices.emplace(name, static_cast<unsigned long long>(i));
  }
  return NpzArchive(path, std::move(archive), std::move(names), std::move(indices));
}

bool NpzArchive::has(const std::string& name) const { return indices_.count(name) != 0; }

Result<std::string> NpzArchive::member_bytes(const std::string& name, std::uint64_t at_most,
                                             std::uint64_t declared_at_most) const {
  const std::string where = fmt::format("{}: {}{}", path_, name, kMemberSuffix);
  const auto found = indices_.find(name);
  if (found == indices_.end()) {
    std::string known;
    for (const auto& other : names_) known += (known.empty() ? "" : ", ") + other;
    return Error{fmt::format("{}: has no array \"{}\" (it holds: {})", path_, name, known.empty() ? "none" : known)};
  }
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_.get(), found->second, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE))
    return Error{fmt::format("{}: cannot read its zip entry: {}", where, zip_strerror(archive_.get()))};
  if (stat.size > declared_at_most)
    return Error{fmt::format("{}: its zip entry declares {} bytes uncompressed, but its header's shape and dtype make "
                             "{} bytes",
                             where, stat.size, declared_at_most)};
  if (stat.size > kMaxNpyBytes)
    return Error{fmt::format("{}: is {} uncompressed, more than any .npy array (at most {})", where,
                             memory_size_text(static_cast<double>(stat.size)),
                             memory_size_text(static_cast<double>(kMaxNpyBytes)))};
  zip_file_t* member = zip_fopen_index(archive_.get(), found->second, 0);
  if (member == nullptr)
    return Error{fmt::format("{}: cannot open: {}", where, zip_strerror(archive_.get()))};
  // Grown as the bytes arrive, never to the declared size at once: a forged entry may declare gigabytes.
  const std::uint64_t wanted = std::min<std::uint64_t>(stat.size, at_most);
  std::string bytes;
  std::size_t filled = 0;
  try {
    while (filled < wanted) {
      const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(wanted - filled, kChunkBytes));
      bytes.resize(filled + chunk);
      const auto got = zip_fread(member, bytes.data() + filled, chunk);
      if (got < 0) {
        const std::string reason = zip_file_strerror(member);
        zip_fclose(member);
        return Error{fmt::format("{}: corrupt member: {}", where, reason)};
      }
      filled += static_cast<std::size_t>(got);
      if (got == 0) break;
    }
  } catch (const std::bad_alloc&) {
    zip_fclose(member);
    return Error{fmt::format("{}: not enough memory for its {}", where, memory_size_text(static_cast<double>(stat.size)))};
  }
  bytes.resize(filled);
  // Reading on to the end is what makes libzip compare the member's CRC.
  if (filled == wanted && at_most >= stat.size) {
    char past_end = 0;
    const auto got = zip_fread(member, &past_end, 1);
    if (got != 0) {
      const std::string reason = got < 0 ? zip_file_strerror(member) : "more bytes than its entry declares";
      zip_fclose(member);
      return Error{fmt::format("{}: corrupt member: {}", where, reason)};
    }
  }
  zip_fclose(member);
  if (filled < wanted)
    return Error{fmt::format("{}: truncated: {} of the {} bytes its entry declares", where, filled, stat.size)};
  return bytes;
}

Result<NpyArray> NpzArchive::read(const std::string& name) const {
  // The header says how many bytes the member holds: no more is ever inflated, so a small archive that
  // inflates to gigabytes is refused after its header.
  auto leading = member_bytes(name, kHeaderReadBytes);
  if (!leading) return Error{leading.error()};
  auto whole = npy_file_bytes(*leading, fmt::format("{}: {}{}", path_, name, kMemberSuffix));
  if (!whole) return Error{whole.error()};
  auto bytes = member_bytes(name, *whole, *whole);
  if (!bytes) return Error{bytes.error()};
  return parse_npy(std::move(*bytes), fmt::format("{}: {}{}", path_, name, kMemberSuffix));
}

Result<NpyArray> NpzArchive::read_header(const std::string& name) const {
  auto bytes = member_bytes(name, kHeaderReadBytes);
  if (!bytes) return Error{bytes.error()};
  return parse_npy_header(*bytes, fmt::format("{}: {}{}", path_, name, kMemberSuffix));
}

Status write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays, bool compressed) {
  int code = 0;
  // libzip writes into a temporary file beside path and renames it over path in zip_close.
  ::zip* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (archive == nullptr) return Error{fmt::format("{}: cannot create: {}", path, zip_open_error(code))};
  std::vector<std::string> encoded;  // must outlive zip_close, which reads the sources
  encoded.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    encoded.push_back(npy_bytes(array));
    zip_source_t* source = zip_source_buffer(archive, encoded.back().data(), encoded.back().size(), 0);
    const zip_int64_t index =
        source ? zip_file_add(archive, (name + kMemberSuffix).c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      const std::string reason = zip_strerror(archive);
      zip_discard(archive);
      return Error{fmt::format("{}: cannot add {}: {}", path, name, reason)};
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  if (zip_close(archive) != 0) {
    const std::string reason = zip_strerror(archive);
    zip_discard(archive);
    return Error{fmt::format("{}: cannot write: {}", path, reason)};
  }
  return success();
}

}  // namespace psgrad
