// A file read in pieces, decompressed on the way when it holds lz4 frames (as apt's lists do), so a
// caller sees the same bytes whether the file was compressed or not, and holds only a piece at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace psgrad {

// Reads `path` (a regular file of at most max_file_bytes; `what` names it in errors) and passes its
// bytes to `take` in order, piece by piece: decompressed when the file starts with the lz4 frame magic
// number (one or more frames), as they are otherwise. Refuses output past max_bytes, a damaged or cut
// frame, and stops at the first error `take` returns. Errors are one line naming the file.
Status read_lz4_or_plain(const std::string& path, const std::string& what, std::uint64_t max_file_bytes,
                         std::uint64_t max_bytes, const std::function<Status(std::string_view)>& take);

// Whether these leading bytes are an lz4 frame's magic number.
bool starts_lz4_frame(std::string_view bytes);

}  // namespace psgrad
