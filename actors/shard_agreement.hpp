// Sync on several shards: the sums of squares of each step's summed gradients, agreed between shards
// so that an array cut between them is clipped by the norm of all of it. Plain bookkeeping, no actors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "payloads/messages.hpp"

namespace psgrad {

// Once a shard has its step's gradients it tells every other shard which workers they came from, and
// the sums of squares of its own chunks of their sum that the other's clip norms need; it steps once
// every other shard has told it the same workers. A peer whose sum lacks one of this shard's
// gradients (a worker lost or joined while the shards gathered) makes this shard drop it and tell
// again; sets only shrink, so they meet.
class ShardAgreement {
 public:
  using Told = std::pair<std::size_t, ShardSquares>;  // to which peer, what

  // From every shard's plan: which of this shard's chunks which peer needs, and from which peer each
  // of its own foreign chunks comes. Returns why the plans do not fit this shard's.
  std::optional<std::string> meet(std::uint32_t index, const std::vector<ShardPlan>& plans, const ShardPlan& own);
  bool known() const { return known_; }
  std::uint32_t index() const { return index_; }

  // Opens (or, with fewer workers, reopens) the step from `version` that sums `workers`' gradients
  // (ascending, `gradients` in the same order, each this shard's floats from `shard_begin`): what to tell
  // each peer. Computed with the very arithmetic one server's optimizer uses (range_squares).
  std::vector<Told> open(std::uint64_t version, std::vector<std::uint32_t> workers, const float* const* gradients,
                         std::size_t count, std::size_t shard_begin);
  // A step is open: its squares were told and the peers' are awaited.
  bool open_step() const { return opened_.has_value(); }
  // Brings this shard's workers in line with those its peers told; true when they shrank (the caller
  // drops the other gradients and opens the step again). A peer whose sum holds more will shrink once
  // it hears from this shard, so what it told is set aside until then.
  bool narrow();
  const std::vector<std::uint32_t>& workers() const { return workers_; }
  // The workers `peer` told its sum of the step under way holds, once it has told them.
  const std::vector<std::uint32_t>* workers_told_by(std::size_t peer) const {
    return peer < told_.size() && told_[peer] ? &peer_workers_[peer] : nullptr;
  }
  // Once narrow() no longer shrinks them: every peer told squares of the very gradients this shard sums.
  bool agreed() const { return received_ == expected_; }
  // The foreign chunks' sums of squares for the step, in the order the optimizer takes them.
  const std::vector<double>& foreign_squares();
  // The step was taken (or summed nothing): the next one starts afresh.
  void close();

  // A peer's squares. Of the step under way (or of fewer workers than it told before): kept. Pipelined,
  // of the next step: held until this shard has stepped (take_told_ahead). Returns why they are refused.
  std::optional<std::string> receive(ShardSquares told, std::uint64_t version, bool pipelined);
  // After a step: the squares peers told of it before this shard got there. Returns the peer whose
  // squares are refused, and why.
  std::optional<std::pair<std::uint32_t, std::string>> take_told_ahead(std::uint64_t version);
  void forget_told_ahead();

 private:
  std::optional<std::string> record(ShardSquares& told, std::uint64_t version);

  bool known_ = false;
  std::optional<std::uint64_t> opened_;  // the version of the step whose squares were told, while open
  std::uint32_t index_ = 0;
  std::size_t begin_ = 0;                        // this shard's first float
  std::vector<GradientRange> own_cut_chunks_;    // this shard's chunks other shards need, each once
  std::vector<std::vector<std::size_t>> sends_;  // per peer: its needs, as indices in own_cut_chunks_
  std::vector<std::size_t> from_;                // per foreign chunk: the peer that holds it
  std::vector<std::size_t> position_;            // per foreign chunk: its place in that peer's squares
  std::vector<std::size_t> squares_from_;        // per peer: how many squares it tells
  std::size_t expected_ = 0;                     // peers that tell this shard each step: all others
  std::vector<double> own_squares_;              // per own cut chunk, of the step under way
  std::vector<float> scratch_;                   // one own cut chunk of summed gradients
  std::vector<std::uint32_t> workers_;           // whose gradients this shard's step sums, ascending
  std::vector<std::vector<double>> peer_squares_;         // per peer, as told
  std::vector<std::vector<std::uint32_t>> peer_workers_;  // per peer: whose gradients its sum holds
  std::vector<double> incoming_;                          // per foreign chunk, of the step being taken
  std::vector<bool> told_;  // per peer: it told squares of this shard's workers, or may still agree
  std::vector<std::optional<ShardSquares>> ahead_;  // pipelined: per peer, squares of the next step
  std::size_t received_ = 0;
};

}  // namespace psgrad
