#include "launch/hostfile.hpp"

#include <cctype>
#include <charconv>

#include <utility>

#include <fmt/format.h>

#include "io/bounded_file.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const auto start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// Host names reach ssh's command line: a leading '-' would be taken for an option.
bool is_host_name(std::string_view host) {
  if (host.empty() || host.front() == '-') return false;
  for (char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("._-:@[]").find(c) == std::string_view::npos)
      return false;
  return true;
}

Result<int> count_field(std::string_view value, int max, const std::string& where, std::string_view field) {
  int count = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (error != std::errc{} || end != value.data() + value.size() || count < 0 || count > max)
    return Error{fmt::format("{}: {}={} is not a whole number 0..{}", where, field, echoed(value), max)};
  return count;
}

}  // namespace

Result<std::vector<HostLine>> parse_hostfile(std::string_view text, const std::string& file_name) {
  std::vector<HostLine> hosts;
  int number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto words = words_of(line);
    if (words.empty()) continue;
    const auto where = fmt::format("{}:{}", file_name, number);
    HostLine host{std::string(words[0]), hosts.empty() ? 0 : 1, 0, number};
    if (!is_host_name(host.host))
      return Error{fmt::format("{}: '{}' is not a host name; expected HOST [workers=N] [shards=K]", where,
                               echoed(words[0]))};
    bool workers_given = false, shards_given = false;
    for (std::size_t k = 1; k < words.size(); ++k) {
      const auto word = words[k];
      const auto equals = word.find('=');
      const auto field = word.substr(0, equals);
      if (equals == std::string_view::npos || (field != "workers" && field != "shards"))
        return Error{fmt::format("{}: unknown field '{}'; expected workers=N or shards=K", where, echoed(word))};
      const bool workers = field == "workers";
      // Which of two counts was meant cannot be told: neither is taken.
      if (std::exchange(workers ? workers_given : shards_given, true))
        return Error{fmt::format("{}: {} is given twice on one line; give it once", where, field)};
      auto count = count_field(word.substr(equals + 1), workers ? max_launched_workers : max_launched_shards,
                               where, field);
      if (!count) return Error{count.error()};
      (workers ? host.workers : host.shards) = *count;
    }
    for (const auto& earlier : hosts)
      if (earlier.host == host.host)
        return Error{fmt::format("{}: host {} is listed twice (first on line {}); give one line workers=N instead",
                                 where, echoed(host.host), earlier.line)};
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) return Error{fmt::format("{}: no hosts; expected lines of HOST [workers=N] [shards=K]", file_name)};
  int workers = 0, shards = 0;
  for (const auto& host : hosts) {
    workers += host.workers;
    shards += host.shards;
  }
  if (workers == 0)
    return Error{fmt::format("{}: no workers; give a second host, or workers=N on the first line", file_name)};
  if (workers > max_launched_workers || shards > max_launched_shards)
    return Error{fmt::format("{}: {} workers and {} shards; at most {} and {}", file_name, workers, shards,
                             max_launched_workers, max_launched_shards)};
  return hosts;
}

Result<std::vector<HostLine>> read_hostfile(const std::string& path) {
  auto text = read_checked_file(path, "hostfile", 1 << 20);
  if (!text) return Error{text.error()};
  return parse_hostfile(*text, path);
}

}  // namespace psgrad
