#include "model/embedding_table.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "model/exact_squares.hpp"
#include "model/gradient_sum.hpp"
#include "model/random.hpp"

namespace psgrad {

namespace {

// splitmix64's finaliser: a bijection, so distinct keys give distinct generator seeds.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Empty when keys are sorted and unique, else where they are not.
std::optional<std::string> unsorted_key(const std::vector<std::uint64_t>& keys) {
  for (std::size_t i = 1; i < keys.size(); ++i)
    if (keys[i] <= keys[i - 1])
      return fmt::format("keys must be sorted and unique, but key {} at position {} follows {}", keys[i], i,
                         keys[i - 1]);
  return std::nullopt;
}

}  // namespace

std::uint64_t embedding_init_seed(std::uint64_t run_seed, std::size_t column) {
  return mix(derive_seed(run_seed, RandomStream::initial_weights) + 0x9e3779b97f4a7c15ull * (column + 1));
}

double gradient_squares(const SparseRows& gradient) {
  return ExactSquares(gradient.values.data(), gradient.values.size()).value();
}

EmbeddingTable::EmbeddingTable(const EmbeddingTableSettings& settings)
    : settings_(settings), rows_(settings.width) {}

const float* EmbeddingTable::find(std::uint64_t key) const {
  const std::size_t slot = slots_.find(key);
  return slot == RowSlots::kNone ? nullptr : rows_.row(slot);
}

std::vector<std::uint64_t> EmbeddingTable::keys() const {
  auto keys = slots_.keys();
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::optional<std::size_t> EmbeddingTable::slot(std::uint64_t key) const {
  const std::size_t slot = slots_.find(key);
  if (slot == RowSlots::kNone) return std::nullopt;
  return slot;
}

void EmbeddingTable::initial_row(std::uint64_t key, float* out) const {
  Random rng(mix(key ^ mix(settings_.init_seed)));
  const double low = settings_.low;
  const double span = static_cast<double>(settings_.high) - low;
  // Drawn in double and stored as float, as Thinc's uniform_init casts numpy's draws.
  for (std::size_t i = 0; i < settings_.width; ++i) out[i] = static_cast<float>(low + span * rng.uniform());
}

std::size_t EmbeddingTable::slot_for(std::uint64_t key) {
  bool made = false;
  const std::size_t slot = slots_.insert(key, made);
  if (made) {
    rows_.grow_to(slot + 1);
    initial_row(key, rows_.row(slot));
  }
  return slot;
}

Result<std::size_t> EmbeddingTable::restore_row(std::uint64_t key, const float* values) {
  if (contains(key)) return Error{fmt::format("restore: key {} has a row already", key)};
  const std::size_t slot = slot_for(key);
  std::copy(values, values + settings_.width, rows_.row(slot));
  return slot;
}

Result<SparseRows> EmbeddingTable::pull(const std::vector<std::uint64_t>& keys) {
  if (auto problem = unsorted_key(keys)) return Error{"pull: " + *problem};
  SparseRows rows(keys, settings_.width);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const float* row = rows_.row(slot_for(keys[i]));
    std::copy(row, row + settings_.width, rows.row(i));
  }
  return rows;
}

Status EmbeddingTable::apply(const SparseRows& gradient, RowOptimizer& optimizer,
                             std::optional<double> total_squares) {
  if (gradient.width != settings_.width || optimizer.width() != settings_.width)
    return Error{fmt::format("apply: gradient rows of width {} and an optimizer of width {} for a table of width {}",
                             gradient.width, optimizer.width(), settings_.width)};
  if (gradient.values.size() != gradient.keys.size() * gradient.width)
    return Error{fmt::format("apply: {} gradient floats for {} keys of width {}", gradient.values.size(),
                             gradient.keys.size(), gradient.width)};
  if (auto problem = unsorted_key(gradient.keys)) return Error{"apply: " + *problem};
  // Not value_or: it would sum the gradient's squares even when the caller gave them.
  double squares = 0.0;
  if (optimizer.grad_clip() > 0.0) squares = total_squares ? *total_squares : gradient_squares(gradient);
  const float scale = clip_scale_from(squares, optimizer.grad_clip());
  // Slots first (new rows made), then the updates, each fetching a later row and its state into the
  // cache while it computes: the rows a batch touches are scattered over the table.
  apply_slots_.clear();
  for (const auto key : gradient.keys) apply_slots_.push_back(slot_for(key));
  constexpr std::size_t kAhead = 4;
  const std::size_t width = settings_.width;
  for (std::size_t i = 0; i < apply_slots_.size(); ++i) {
    if (i + kAhead < apply_slots_.size()) {
      const std::size_t later = apply_slots_[i + kAhead];
      for (std::size_t f = 0; f < width; f += 16) __builtin_prefetch(rows_.row(later) + f, 1);
      optimizer.prefetch_row(later);
    }
    const std::size_t slot = apply_slots_[i];
    optimizer.update_row(slot, rows_.row(slot), gradient.row(i), scale);
  }
  return success();
}

}  // namespace psgrad
