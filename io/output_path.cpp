#include "io/output_path.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/bounded_file.hpp"
#include "io/user_text.hpp"

namespace psgrad {

Status check_replaceable(const std::string& path, const std::string& what) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    const int error = errno;
    if (error == ENOENT) return success();
    if (error == ELOOP) return Error{fmt::format("{}: cannot write {}: the path is a symbolic link loop", echoed(path), what)};
    // ENAMETOOLONG, EACCES, ENOTDIR: creating the file will meet the same reason.
    return Error{fmt::format("{}: cannot write {}: {}", echoed(path), what, std::strerror(error))};
  }
  if (!S_ISREG(status.st_mode))
    return Error{fmt::format("{}: is {}, not a regular file; psgrad writes the {} only to a regular file or a new "
                             "name",
                             echoed(path), file_kind_text(status.st_mode), what)};
  return success();
}

Status check_output_path(const std::string& path, const std::string& what) {
  // An empty name would probe ".tmp-XXXXXX" in the working folder and pass, then fail at the rename.
  if (path.empty()) return Error{fmt::format("{}: the path is empty; expected a file name", what)};
  if (auto replaceable = check_replaceable(path, what); !replaceable) return replaceable;
  // The writers create "<path>.tmp-XXXXXX" beside it and rename it over the path (atomic_file.hpp):
  // creating one now meets every reason a write would fail for, but a full disk.
  std::string probe = path + ".tmp-XXXXXX";
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0)
    return Error{fmt::format("{}: cannot write {}: cannot create a file beside it: {}", echoed(path), what,
                             std::strerror(errno))};
  ::close(fd);
  ::unlink(probe.c_str());
  return success();
}

}  // namespace psgrad
