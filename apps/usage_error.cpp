#include "apps/usage_error.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/error_exit.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

// Edits (insert, delete, replace, swap of neighbours) from a to b: a typed command's distance from each.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string unknown_command(const std::string& word, const std::vector<std::string>& commands) {
  if (word.empty() || word[0] == '-') return {};
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) return {};
  std::string nearest;
  std::size_t best = 3;  // more edits than 2 is another word, not a typo
  // A huge argument is no typo of a short command; it is not compared at all.
  if (word.size() <= 64)
    for (const auto& command : commands)
      if (const auto distance = edit_distance(word, command); distance < best) {
        best = distance;
        nearest = command;
      }
  return fmt::format("unknown command \"{}\"{}; the commands are {} (psgrad --help)", echoed(word),
                     nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest), fmt::join(commands, ", "));
}

int usage_error(const CLI::ParseError& error) {
  std::string text = error.what();
  std::replace(text.begin(), text.end(), '\n', ' ');
  // CLI11's text names the option first ("--workers: expected ..."); it stands alone, as config errors do.
  fmt::print(stderr, "{}\n", echoed(text, 2 * echoed_text_limit));
  return exit_refused;
}

}  // namespace psgrad
