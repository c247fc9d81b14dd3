#include "actors/gradient_slicer.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace psgrad {

Result<GradientSlicer> GradientSlicer::make(std::vector<ShardPlan> plans) {
  if (plans.empty()) return Error{"no shard plans"};
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].begin != at || plans[i].end <= plans[i].begin)
      return Error{fmt::format("shard {} holds floats [{}, {}), but the previous shard ends at {}", i, plans[i].begin,
                               plans[i].end, at)};
    at = plans[i].end;
  }
  for (std::size_t i = 0; i < plans.size(); ++i)
    for (const auto& chunk : plans[i].foreign_chunks) {
      const bool inside_layout = chunk.size > 0 && chunk.size <= at && chunk.begin <= at - chunk.size;
      if (!inside_layout || (chunk.begin + chunk.size > plans[i].begin && chunk.begin < plans[i].end))
        return Error{fmt::format("shard {} asks for the sum of squares of floats [{}, {}), which are not another "
                                 "shard's", i, chunk.begin, chunk.begin + chunk.size)};
    }
  return GradientSlicer(std::move(plans));
}

GradientSlicer::GradientSlicer(std::vector<ShardPlan> plans) : plans_(std::move(plans)) {
  for (const auto& plan : plans_)
    cut_chunks_.insert(cut_chunks_.end(), plan.foreign_chunks.begin(), plan.foreign_chunks.end());
  const auto by_position = [](const GradientRange& a, const GradientRange& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.size < b.size;
  };
  std::sort(cut_chunks_.begin(), cut_chunks_.end(), by_position);
  cut_chunks_.erase(std::unique(cut_chunks_.begin(), cut_chunks_.end()), cut_chunks_.end());
  std::uint64_t largest = 0;
  for (const auto& chunk : cut_chunks_) largest = std::max(largest, chunk.size);
  for (const auto& plan : plans_) {
    std::vector<std::size_t> indices;
    for (const auto& chunk : plan.foreign_chunks)
      indices.push_back(static_cast<std::size_t>(
          std::lower_bound(cut_chunks_.begin(), cut_chunks_.end(), chunk, by_position) - cut_chunks_.begin()));
    foreign_.push_back(std::move(indices));
  }
  squares_.assign(cut_chunks_.size(), 0.0);
  scratch_.assign(largest, 0.0f);
}

Status GradientSlicer::take(const Gradients& gradient, bool squares) {
  if (gradient.values.size() != total_size())
    return Error{fmt::format("gradients from worker {} hold {} floats; the {} server shards hold {}", gradient.worker,
                             gradient.values.size(), plans_.size(), total_size())};
  if (!squares) return success();
  const float* values = gradient.values.data();
  // Each cut chunk once, however many shards share its array.
  for (std::size_t j = 0; j < cut_chunks_.size(); ++j)
    squares_[j] = range_squares(&values, 1, cut_chunks_[j].begin, cut_chunks_[j].size, scratch_.data());
  return success();
}

Gradients GradientSlicer::part(const Gradients& whole, std::size_t shard) const {
  // Everything the whole carries, but only this shard's floats (and no sums of squares: the caller
  // adds this shard's own).
  Gradients part = whole;
  part.values = whole.values.slice(plans_[shard].begin, plans_[shard].end);
  part.foreign_squares.clear();
  return part;
}

std::vector<double> GradientSlicer::foreign_squares(std::size_t shard) const {
  std::vector<double> squares;
  squares.reserve(foreign_[shard].size());
  for (const auto j : foreign_[shard]) squares.push_back(squares_[j]);
  return squares;
}

Result<std::vector<Gradients>> GradientSlicer::slice(const Gradients& whole, bool with_squares) {
  if (auto taken = take(whole, with_squares); !taken) return Error{taken.error()};
  std::vector<Gradients> parts;
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    parts.push_back(part(whole, i));
    if (with_squares) parts.back().foreign_squares = foreign_squares(i);
  }
  return parts;
}

}  // namespace psgrad
