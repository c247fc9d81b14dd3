// Keeps the unfinished line between reads, so a line split across two reads comes out whole.
#include "apps/line_splitter.hpp"

namespace psgrad {

std::vector<std::string> LineSplitter::add(const char* bytes, std::size_t size) {
  std::vector<std::string> lines;
  partial_.append(bytes, size);
  std::size_t start = 0;
  for (auto end = partial_.find('\n'); end != std::string::npos; end = partial_.find('\n', start)) {
    lines.push_back(partial_.substr(start, end - start));
    start = end + 1;
  }
  partial_.erase(0, start);
  return lines;
}

std::optional<std::string> LineSplitter::rest() {
  if (partial_.empty()) return std::nullopt;
  auto line = std::move(partial_);
  partial_.clear();
  return line;
}

}  // namespace psgrad
