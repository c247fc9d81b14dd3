// NumPy .npz archives (zip files of .npy members, stored or deflated), read member by member.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/npy_array.hpp"
#include "model/result.hpp"

struct zip;  // libzip's archive handle

namespace psgrad {

class NpzArchive {
 public:
  // Opens only a regular file within a size bound, and only a readable zip archive.
  static Result<NpzArchive> open(const std::string& path);

  // Array names, as np.savez gave them: "x_train" for the member x_train.npy.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const;
  Result<NpyArray> read(const std::string& name) const;
  // Only the array's header (shape and dtype), decompressing no more than that.
  Result<NpyArray> read_header(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(::zip* archive) const;
  };
  NpzArchive(std::string path, std::unique_ptr<::zip, Closer> archive, std::vector<std::string> names,
             std::map<std::string, unsigned long long> indices)
      : path_(std::move(path)), archive_(std::move(archive)), names_(std::move(names)), indices_(std::move(indices)) {}
  // At most at_most of the member's bytes; an entry that declares more than declared_at_most bytes is
  // refused before any is inflated.
  Result<std::string> member_bytes(const std::string& name, std::uint64_t at_most,
                                   std::uint64_t declared_at_most = UINT64_MAX) const;

  std::string path_;
  std::unique_ptr<::zip, Closer> archive_;
  std::vector<std::string> names_;
  std::map<std::string, unsigned long long> indices_;  // array name -> zip entry index
};

// Writes arrays as np.savez (stored) or np.savez_compressed (deflated) would; the file appears whole
// or not at all.
Status write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays, bool compressed);

}  // namespace psgrad
