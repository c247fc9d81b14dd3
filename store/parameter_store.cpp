#include "store/parameter_store.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace psgrad {

ParameterStore::ParameterStore(ParameterLayout layout, std::vector<float> weights, std::unique_ptr<Optimizer> optimizer,
                               std::size_t begin, std::size_t end, std::uint64_t version)
    : layout_(std::move(layout)),
      optimizer_(std::move(optimizer)),
      begin_(begin),
      end_(end == 0 ? layout_.total_size() : end),
      version_(version),
      pool_(end_ - begin_) {
  if (!optimizer_ || begin_ > end_ || end_ > layout_.total_size() || weights.size() != end_ - begin_)
    throw std::logic_error("ParameterStore: weights, range and optimizer do not fit the layout");
  auto first = pool_.acquire();
  first->assign(weights.begin(), weights.end());
  current_ = std::shared_ptr<float>(first, first->data());
}

namespace {

std::string diverged(const std::string& what, std::uint64_t step) {
  return fmt::format("training diverged at step {}: {}; lower optimizer.learn_rate or keep optimizer.grad_clip on, "
                     "and resume from the last checkpoint",
                     step, what);
}

}  // namespace

std::optional<std::string> ParameterStore::apply_gradients(const float* const* gradients, std::size_t count,
                                                           const double* foreign_squares, float loss,
                                                           std::shared_ptr<float> into) {
  const auto next_step = version_ + 1;
  if (!std::isfinite(loss)) return diverged(fmt::format("the loss is {}", loss), next_step);
  // Counted before `next` below takes a reference of its own: the pool and current_ hold it.
  const bool handed_out = current_read_outside_ || current_.use_count() > 2;
  auto next = current_;
  bool next_read_outside = current_read_outside_;
  if (into) {
    next = std::move(into);
    next_read_outside = true;
  } else if (handed_out) {
    auto buffer = pool_.acquire();
    next = std::shared_ptr<float>(buffer, buffer->data());
    next_read_outside = false;
  }
  optimizer_->apply_gradients(current_.get(), next.get(), gradients, count, foreign_squares);
  current_ = std::move(next);
  current_read_outside_ = next_read_outside;
  if (!optimizer_->last_step_finite())
    return diverged(fmt::format("the gradients or the new weights are not finite (loss {:.4g})", loss), next_step);
  ++version_;
  return std::nullopt;
}

namespace {

// Where a cut may fall: the start of an array, every `grain` floats into one, and the end.
std::vector<std::size_t> allowed_cuts(const ParameterLayout& layout, std::size_t grain) {
  std::vector<std::size_t> allowed;
  for (const auto& array : layout.arrays())
    for (std::size_t at = 0; at < array.size(); at += grain) allowed.push_back(array.offset + at);
  allowed.push_back(layout.total_size());
  return allowed;
}

}  // namespace

std::size_t max_shard_count(const ParameterLayout& layout, std::size_t grain) {
  if (grain == 0) return 0;
  return allowed_cuts(layout, grain).size() - 1;
}

std::vector<std::size_t> shard_cuts(const ParameterLayout& layout, std::size_t count, std::size_t grain) {
  if (count == 0 || grain == 0) return {};
  const auto allowed = allowed_cuts(layout, grain);
  // Each shard needs a point of its own, and the end one more.
  if (allowed.size() < count + 1) return {};
  std::vector<std::size_t> cuts = {0};
  std::size_t from = 1;  // index in `allowed` of the first point the next cut may use
  for (std::size_t i = 1; i < count; ++i) {
    const double target = static_cast<double>(layout.total_size()) * static_cast<double>(i) / static_cast<double>(count);
    // Leave a point for every later cut and the end.
    const std::size_t last = allowed.size() - 1 - (count - i);
    if (from > last) return {};
    std::size_t best = from;
    for (std::size_t p = from; p <= last; ++p)
      if (std::fabs(static_cast<double>(allowed[p]) - target) < std::fabs(static_cast<double>(allowed[best]) - target))
        best = p;
    cuts.push_back(allowed[best]);
    from = best + 1;
  }
  cuts.push_back(layout.total_size());
  return cuts;
}

}  // namespace psgrad
