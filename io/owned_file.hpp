// A C stdio file that closes itself: the writers of line and record files hold one.
#pragma once

#include <cstdio>
#include <memory>

namespace psgrad {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using OwnedFile = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace psgrad
