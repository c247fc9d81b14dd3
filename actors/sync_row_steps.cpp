#include "actors/sync_row_steps.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/row_gradient_sum.hpp"
#include "model/run_limits.hpp"

namespace psgrad {

SyncRowSteps::SyncRowSteps(std::uint32_t workers, std::uint32_t shard, std::uint32_t shards, std::size_t tables,
                           bool exchange, bool told_workers)
    : workers_(workers), shard_(shard), shards_(shards), tables_(tables), exchange_(exchange && shards > 1),
      told_workers_(told_workers), lost_(workers, false) {}

namespace {

bool takes_worker(const std::optional<std::vector<std::uint32_t>>& takes, std::uint32_t worker) {
  return !takes || std::binary_search(takes->begin(), takes->end(), worker);
}

}  // namespace

bool SyncRowSteps::admit(std::uint32_t worker) {
  if (worker < workers_) return true;
  if (!told_workers_ || worker >= static_cast<std::uint32_t>(max_workers)) return false;
  workers_ = worker + 1;
  lost_.resize(workers_, false);
  for (auto& [version, step] : pending_)
    if (!step.summed) step.pushes.resize(workers_);
  return true;
}

void SyncRowSteps::drop_worker(std::uint32_t worker) {
  if (worker < workers_) lost_[worker] = true;
}

bool SyncRowSteps::all_in(const Pending& step) const {
  if (told_workers_ && !step.takes) return false;
  for (std::uint32_t w = 0; w < workers_; ++w)
    if (takes_worker(step.takes, w) && !step.pushes[w] && !lost_[w]) return false;
  return true;
}

SyncRowSteps::Pending& SyncRowSteps::pending(std::uint64_t version) {
  auto [at, made] = pending_.try_emplace(version);
  if (made) {
    at->second.pushes.resize(workers_);
    at->second.peer_words.resize(shards_);
  }
  return at->second;
}

std::optional<std::string> SyncRowSteps::add_push(RowPush push, std::uint64_t version) {
  const bool known = admit(push.worker);
  // A backup worker's late push: dropped, as the dense server dropped its gradient.
  if (told_workers_ && push.version < version && known) return std::nullopt;
  if (push.version < version)
    return fmt::format("worker {} pushed for the step from version {}, which this shard has taken (it is at {})",
                       push.worker, push.version, version);
  if (!known) return fmt::format("a push from worker {}, but the run has {} workers", push.worker, workers_);
  if (lost_[push.worker])
    return fmt::format("worker {} pushed for the step from version {}, but the run went on without it", push.worker,
                       push.version);
  auto& step = pending(push.version);
  if (told_workers_ && (step.summed || !takes_worker(step.takes, push.worker))) return std::nullopt;
  if (step.summed || step.pushes[push.worker])
    return fmt::format("worker {} pushed twice for the step from version {}", push.worker, push.version);
  step.pushes[push.worker] = std::move(push);
  ++step.pushed;
  return std::nullopt;
}

std::optional<std::string> SyncRowSteps::set_step_workers(std::uint64_t version, std::vector<std::uint32_t> workers) {
  if (!told_workers_) return std::string("this shard's steps take every worker's pushes");
  std::sort(workers.begin(), workers.end());
  for (const auto worker : workers)
    if (!admit(worker))
      return fmt::format("the step from version {} takes worker {}, but a run has at most {} workers", version,
                         worker, max_workers);
  auto& step = pending(version);
  if (step.takes) return fmt::format("told twice which workers the step from version {} takes", version);
  // Pushes already kept from workers the step does not take are dropped now.
  for (std::uint32_t w = 0; w < workers_; ++w)
    if (step.pushes[w] && !std::binary_search(workers.begin(), workers.end(), w)) {
      step.pushes[w].reset();
      --step.pushed;
    }
  step.takes = std::move(workers);
  return std::nullopt;
}

std::optional<std::string> SyncRowSteps::add_squares(TableSquares told, std::uint64_t version) {
  if (!exchange_) return std::string("this shard exchanges no sums of squares");
  if (told.shard >= shards_ || told.shard == shard_)
    return fmt::format("squares from shard {}, not a peer of shard {} of {}", told.shard, shard_, shards_);
  if (told.version < version)
    return fmt::format("shard {} told squares of the step from version {}, which this shard has taken (it is at {})",
                       told.shard, told.version, version);
  if (told.words.size() != tables_ * ExactSquares::word_count)
    return fmt::format("shard {} told {} words of squares for {} tables, where {} were expected", told.shard,
                       told.words.size(), tables_, tables_ * ExactSquares::word_count);
  for (std::size_t t = 0; t < tables_; ++t) {
    ExactSquares check;
    if (!ExactSquares::from_words(told.words.data() + t * ExactSquares::word_count, ExactSquares::word_count, check))
      return fmt::format("shard {} told squares of table {} that are no exact sum", told.shard, t);
  }
  auto& step = pending(told.version);
  auto& slot = step.peer_words[told.shard];
  if (!slot.empty())
    return fmt::format("shard {} told squares twice for the step from version {}", told.shard, told.version);
  slot = std::move(told.words);
  ++step.peers_heard;
  return std::nullopt;
}

bool SyncRowSteps::gathered(std::uint64_t version) const {
  const auto at = pending_.find(version);
  return at != pending_.end() && (at->second.summed || all_in(at->second));
}

std::optional<TableSquares> SyncRowSteps::sum(std::uint64_t version) {
  auto& step = pending(version);
  if (step.summed || !all_in(step)) return std::nullopt;
  step.summed = true;
  step.step.gradients.resize(tables_);
  step.own.assign(tables_, ExactSquares());
  for (std::size_t t = 0; t < tables_; ++t) {
    std::vector<const SparseRows*> in_worker_order;
    for (const auto& push : step.pushes)
      if (push && takes_worker(step.takes, push->worker))
        for (const auto& entry : push->tables)
          if (entry.table == t) in_worker_order.push_back(&entry.rows);
    if (!in_worker_order.empty()) step.step.gradients[t] = sum_row_gradients(in_worker_order);
    const auto& gradient = step.step.gradients[t];
    step.own[t].add(gradient.values.data(), gradient.values.size());
  }
  step.pushes.clear();  // the sums hold all of it now
  if (!exchange_) return std::nullopt;
  TableSquares told{version, shard_, {}};
  for (const auto& own : step.own) own.append_words(told.words);
  return told;
}

bool SyncRowSteps::complete(std::uint64_t version) const {
  const auto at = pending_.find(version);
  if (at == pending_.end() || !at->second.summed) return false;
  return !exchange_ || at->second.peers_heard + 1 == shards_;
}

SyncRowSteps::Step SyncRowSteps::take(std::uint64_t version) {
  auto& step = pending(version);
  // Exact sums add in any order: every shard gets the same bits for each table.
  for (std::size_t t = 0; t < tables_; ++t) {
    ExactSquares total = step.own[t];
    for (const auto& words : step.peer_words) {
      if (words.empty()) continue;
      ExactSquares part;
      ExactSquares::from_words(words.data() + t * ExactSquares::word_count, ExactSquares::word_count, part);
      total.add(part);
    }
    step.step.squares.push_back(total.value());
  }
  Step taken = std::move(step.step);
  pending_.erase(version);
  return taken;
}

}  // namespace psgrad
