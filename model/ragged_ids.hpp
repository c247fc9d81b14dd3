// One field of a batch: each example's variable-length bag of uint64 ids (a text's tokens, a record's
// categorical values), stored as Thinc's Ragged stores rows: all ids in one array plus where each bag starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "model/result.hpp"

namespace psgrad {

class RaggedIds {
 public:
  RaggedIds() = default;

  // From all ids and one length per example; the lengths must add up to the number of ids.
  static Result<RaggedIds> from_lengths(std::vector<std::uint64_t> ids, const std::vector<std::size_t>& lengths) {
    std::size_t total = 0;
    for (auto length : lengths) total += length;
    if (total != ids.size())
      return Error{fmt::format("bag lengths add up to {} ids, but there are {}", total, ids.size())};
    RaggedIds ragged;
    ragged.ids_ = std::move(ids);
    for (auto length : lengths) ragged.offsets_.push_back(ragged.offsets_.back() + length);
    return ragged;
  }

  // Appends one example's bag (empty is allowed: the example has no ids in this field).
  void add_example(const std::uint64_t* ids, std::size_t count) {
    ids_.insert(ids_.end(), ids, ids + count);
    offsets_.push_back(ids_.size());
  }
  void add_example(std::initializer_list<std::uint64_t> ids) { add_example(ids.begin(), ids.size()); }

  std::size_t examples() const { return offsets_.size() - 1; }
  std::size_t id_count() const { return ids_.size(); }
  const std::vector<std::uint64_t>& ids() const { return ids_; }
  // examples() + 1 entries: example e's ids are [offsets[e], offsets[e + 1]).
  const std::vector<std::size_t>& offsets() const { return offsets_; }
  std::size_t length(std::size_t example) const { return offsets_.at(example + 1) - offsets_.at(example); }
  const std::uint64_t* bag(std::size_t example) const { return ids_.data() + offsets_.at(example); }

 private:
  std::vector<std::uint64_t> ids_;
  std::vector<std::size_t> offsets_{0};
};

}  // namespace psgrad
