// Sync on table shards: each step's row pushes gathered until every worker's is in, summed per key in
// worker order, and, with several shards clipping, every shard's part of each table's sum of squares,
// added exactly, so a table is clipped by the norm of its whole summed gradient and any number of shards
// steps bit for bit as one. Plain bookkeeping, no actors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/exact_squares.hpp"
#include "model/sparse_rows.hpp"
#include "payloads/sparse_messages.hpp"

namespace psgrad {

class SyncRowSteps {
 public:
  // `exchange`: several shards and a clipping optimizer, so each step waits for the other shards' squares.
  // `told_workers` (backup workers, elastic joins): each step sums the pushes of the workers the dense
  // server names for it (set_step_workers), and waits for those alone; the others' pushes for it are
  // dropped. A worker past the first `workers` (one that joined) is taken, up to the run's limit.
  SyncRowSteps(std::uint32_t workers, std::uint32_t shard, std::uint32_t shards, std::size_t tables, bool exchange,
               bool told_workers = false);

  // Keeps a worker's push for the step from its version; `version` is the shard's (the next step it
  // takes). Returns why it is refused: a step already taken, an unknown worker, a second push. With
  // told_workers a push the step does not take (late, or from a worker it was not told of) is dropped.
  std::optional<std::string> add_push(RowPush push, std::uint64_t version);
  // told_workers: the workers whose pushes the step from `version` sums (the dense server's step took
  // their gradients); returns why they are refused.
  std::optional<std::string> set_step_workers(std::uint64_t version, std::vector<std::uint32_t> workers);
  // Keeps a peer's squares; returns why they are refused.
  std::optional<std::string> add_squares(TableSquares told, std::uint64_t version);

  // The driver went on without this worker: no step waits for its pushes from now on (a push it made
  // before is kept), and a later one is refused.
  void drop_worker(std::uint32_t worker);

  // Every worker's push for the step from `version` is in (a lost worker's, if it made one).
  bool gathered(std::uint64_t version) const;
  // Sums a gathered step's pushes (once): what to tell every other shard, when they exchange squares.
  std::optional<TableSquares> sum(std::uint64_t version);
  // Summed, and every other shard's squares are in.
  bool complete(std::uint64_t version) const;

  struct Step {
    std::vector<SparseRows> gradients;  // per table, the sum of the workers' gradients
    std::vector<double> squares;        // per table, of the whole summed gradient over every shard
  };
  // Takes a complete step out of the books.
  Step take(std::uint64_t version);

 private:
  struct Pending {
    std::vector<std::optional<RowPush>> pushes;  // per worker
    std::optional<std::vector<std::uint32_t>> takes;  // told_workers: the workers it sums, ascending
    std::size_t pushed = 0;
    bool summed = false;
    Step step;
    std::vector<ExactSquares> own;               // per table, of this shard's part
    std::vector<std::vector<std::uint64_t>> peer_words;  // per shard, as told
    std::size_t peers_heard = 0;
  };
  Pending& pending(std::uint64_t version);
  // Whether pushes of `worker` can be kept: one of the first workers, or with told_workers one that joined.
  bool admit(std::uint32_t worker);
  bool all_in(const Pending& step) const;

  std::uint32_t workers_;
  std::uint32_t shard_;
  std::uint32_t shards_;
  std::size_t tables_;
  bool exchange_;
  bool told_workers_;
  std::vector<bool> lost_;  // per worker
  std::map<std::uint64_t, Pending> pending_;  // by version: pushes and squares may come a step early
};

}  // namespace psgrad
