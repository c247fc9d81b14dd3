#include "actors/shard_agreement.hpp"

#include <algorithm>
#include <functional>
#include <iterator>

#include <fmt/format.h>

#include "model/norm_chunks.hpp"

namespace psgrad {

namespace {

// Whether `workers` is a strict subset of `before`: a peer that dropped a gradient to agree.
bool fewer_workers(const std::vector<std::uint32_t>& workers, const std::vector<std::uint32_t>& before) {
  return workers.size() < before.size() && std::includes(before.begin(), before.end(), workers.begin(), workers.end());
}

}  // namespace

std::optional<std::string> ShardAgreement::meet(std::uint32_t index, const std::vector<ShardPlan>& plans,
                                                 const ShardPlan& own) {
  if (index >= plans.size()) return fmt::format("told it is shard {} of {}", index, plans.size());
  if (plans[index].begin != own.begin || plans[index].end != own.end ||
      !(plans[index].foreign_chunks == own.foreign_chunks))
    return fmt::format("told it is shard {} holding floats [{}, {}), but it holds [{}, {})", index, plans[index].begin,
                       plans[index].end, own.begin, own.end);
  const auto holder = [&](const GradientRange& range) -> std::size_t {
    for (std::size_t j = 0; j < plans.size(); ++j)
      if (range.begin >= plans[j].begin && range.begin + range.size <= plans[j].end) return j;
    return plans.size();
  };
  std::vector<GradientRange> own_cut_chunks;
  std::vector<std::vector<std::size_t>> sends(plans.size());
  std::vector<std::size_t> from(own.foreign_chunks.size(), 0);
  std::vector<std::size_t> position(own.foreign_chunks.size(), 0);
  std::vector<std::size_t> count_from(plans.size(), 0);
  for (std::size_t f = 0; f < own.foreign_chunks.size(); ++f) {
    const auto& range = own.foreign_chunks[f];
    const auto j = holder(range);
    if (j == plans.size() || j == index)
      return fmt::format("no other shard holds floats [{}, {})", range.begin, range.begin + range.size);
    from[f] = j;
    position[f] = count_from[j]++;
  }
  for (std::size_t j = 0; j < plans.size(); ++j) {
    if (j == index) continue;
    for (const auto& range : plans[j].foreign_chunks) {
      if (holder(range) != index) continue;
      auto at = std::find(own_cut_chunks.begin(), own_cut_chunks.end(), range);
      if (at == own_cut_chunks.end()) at = own_cut_chunks.insert(own_cut_chunks.end(), range);
      sends[j].push_back(static_cast<std::size_t>(at - own_cut_chunks.begin()));
    }
  }
  index_ = index;
  begin_ = own.begin;
  own_cut_chunks_ = std::move(own_cut_chunks);
  sends_ = std::move(sends);
  from_ = std::move(from);
  position_ = std::move(position);
  squares_from_ = std::move(count_from);
  expected_ = plans.size() - 1;  // every other shard, if only to say which workers its sum holds
  std::uint64_t largest = 0;
  for (const auto& chunk : own_cut_chunks_) largest = std::max(largest, chunk.size);
  scratch_.assign(largest, 0.0f);
  own_squares_.assign(own_cut_chunks_.size(), 0.0);
  incoming_.assign(own.foreign_chunks.size(), 0.0);
  told_.assign(plans.size(), false);
  ahead_.assign(plans.size(), std::nullopt);
  peer_squares_.assign(plans.size(), {});
  peer_workers_.assign(plans.size(), {});
  received_ = 0;
  known_ = true;
  return std::nullopt;
}

std::vector<ShardAgreement::Told> ShardAgreement::open(std::uint64_t version, std::vector<std::uint32_t> workers,
                                                       const float* const* gradients, std::size_t count,
                                                       std::size_t shard_begin) {
  workers_ = std::move(workers);
  for (std::size_t c = 0; c < own_cut_chunks_.size(); ++c)
    own_squares_[c] = range_squares(gradients, count, own_cut_chunks_[c].begin - shard_begin, own_cut_chunks_[c].size,
                                    scratch_.data());
  std::vector<Told> told;
  for (std::size_t j = 0; j < sends_.size(); ++j) {
    if (j == index_) continue;
    ShardSquares squares{version, index_, {}, workers_};
    squares.squares.reserve(sends_[j].size());
    for (const auto c : sends_[j]) squares.squares.push_back(own_squares_[c]);
    told.emplace_back(j, std::move(squares));
  }
  opened_ = version;
  return told;
}

bool ShardAgreement::narrow() {
  bool shrank = false;
  for (std::size_t j = 0; j < told_.size(); ++j) {
    if (!told_[j] || peer_workers_[j] == workers_) continue;
    const auto& theirs = peer_workers_[j];
    if (std::includes(theirs.begin(), theirs.end(), workers_.begin(), workers_.end())) {
      told_[j] = false;
      --received_;
      continue;
    }
    std::vector<std::uint32_t> both;
    std::set_intersection(workers_.begin(), workers_.end(), theirs.begin(), theirs.end(), std::back_inserter(both));
    workers_ = std::move(both);
    shrank = true;
  }
  return shrank;
}

const std::vector<double>& ShardAgreement::foreign_squares() {
  for (std::size_t f = 0; f < from_.size(); ++f) incoming_[f] = peer_squares_[from_[f]][position_[f]];
  return incoming_;
}

void ShardAgreement::close() {
  opened_.reset();
  received_ = 0;
  std::fill(told_.begin(), told_.end(), false);
}

std::optional<std::string> ShardAgreement::receive(ShardSquares told, std::uint64_t version, bool pipelined) {
  if (!known_) return std::string("it was not told its peers");
  if (told.shard >= told_.size() || told.shard == index_) return std::string("no such peer");
  // No shard runs two steps ahead, since each step needs every shard's squares.
  if (pipelined && told.version == version + 1) {
    auto& waiting = ahead_[told.shard];
    if (waiting && !fewer_workers(told.workers, waiting->workers))
      return std::string("it already told them for the next step");
    waiting = std::move(told);
    return std::nullopt;
  }
  return record(told, version);
}

std::optional<std::pair<std::uint32_t, std::string>> ShardAgreement::take_told_ahead(std::uint64_t version) {
  for (auto& waiting : ahead_) {
    if (!waiting) continue;
    auto told = std::move(*waiting);
    waiting.reset();
    if (auto refused = record(told, version)) return std::make_pair(told.shard, std::move(*refused));
  }
  return std::nullopt;
}

void ShardAgreement::forget_told_ahead() {
  for (auto& waiting : ahead_) waiting.reset();
}

std::optional<std::string> ShardAgreement::record(ShardSquares& told, std::uint64_t version) {
  if (told.version != version)
    return fmt::format("they are of the step from version {}, and this shard is at version {}; the shards are out "
                       "of step",
                       told.version, version);
  const auto& workers = told.workers;
  if (std::adjacent_find(workers.begin(), workers.end(), std::greater_equal<std::uint32_t>()) != workers.end())
    return std::string("its workers are not in ascending order");
  if (told_[told.shard] && !fewer_workers(workers, peer_workers_[told.shard]))
    return std::string("it already told them for this step");
  if (told.squares.size() != squares_from_[told.shard])
    return fmt::format("{} sums where {} were expected", told.squares.size(), squares_from_[told.shard]);
  peer_squares_[told.shard] = std::move(told.squares);
  peer_workers_[told.shard] = std::move(told.workers);
  if (!told_[told.shard]) ++received_;
  told_[told.shard] = true;
  return std::nullopt;
}

}  // namespace psgrad
