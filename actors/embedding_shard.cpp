#include "actors/embedding_shard.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/sec.hpp"
#include "actors/shard_tables.hpp"
#include "actors/sync_row_steps.hpp"

namespace psgrad {

namespace {

class EmbeddingShard : public EmbeddingShardActor::base {
 public:
  EmbeddingShard(caf::actor_config& config, EmbeddingShardSetup setup, ShardTables tables)
      : EmbeddingShardActor::base(config),
        setup_(std::move(setup)),
        tables_(std::move(tables)),
        version_(setup_.version),
        steps_(setup_.workers, setup_.index, setup_.count, tables_.table_count(), tables_.grad_clip() > 0.0,
               setup_.told_step_workers) {}

  behavior_type make_behavior() override {
    return {
        [this](pull_atom, RowPull& pull) -> caf::result<PulledRows> {
          if (fault_) return refuse(*fault_);
          if (auto problem = tables_.check(pull)) return refuse("pull: " + *problem);
          if (!sync()) return tables_.rows(pull, version_);
          // Pipelined: a worker's next step starts from the weights before the step just taken.
          if (setup_.pipelined && !pull.evaluation && pull.version + 1 == version_ && rows_before_step_)
            return rows_before_step(pull);
          // Backup workers: a straggler's pull for a step the others already took. Its gradient will be
          // dropped as late, so the rows it computes with need not be that step's: it gets the current ones.
          if (pull.version < version_ && setup_.told_step_workers && !pull.evaluation)
            return tables_.rows(pull, version_);
          if (pull.version < version_)
            return refuse(fmt::format("pull of the rows of version {}, but this shard has taken the steps up to "
                                      "version {} and keeps no older rows",
                                      pull.version, version_));
          if (pull.version == version_) {
            auto rows = answer(pull);
            if (pull.evaluation) advance();  // the step it held back may go now
            return rows;
          }
          auto promise = make_response_promise<PulledRows>();
          waiting_pulls_.emplace_back(std::move(pull), promise);
          return promise;
        },
        [this](push_rows_atom, RowPush& push) -> caf::result<bool> {
          if (fault_) return refuse(*fault_);
          if (!push.refusal.empty()) return refuse(fmt::format("push from worker {}: {}", push.worker, push.refusal));
          if (auto problem = tables_.check(push, !sync()))
            return refuse(fmt::format("push from worker {}: {}", push.worker, *problem));
          if (!sync()) {
            if (!apply_now(push)) return refuse(*fault_);
            return true;
          }
          if (exchanges_squares() && peers_.empty()) return refuse("a push came before the shard was told its peers");
          if (auto problem = steps_.add_push(std::move(push), version_)) return refuse(*problem);
          advance();
          if (fault_) return refuse(*fault_);
          return true;
        },
        [this](step_workers_atom, std::uint64_t version, std::vector<std::uint32_t>& workers) {
          if (fault_ || !sync() || version < version_) return;
          if (auto problem = steps_.set_step_workers(version, std::move(workers))) return fail(*problem);
          advance();
        },
        [this](worker_lost_atom, std::uint32_t worker) {
          if (fault_ || !sync()) return;
          steps_.drop_worker(worker);
          advance();  // a step that waited only for it goes now
        },
        [this](table_squares_atom, TableSquares& told) {
          if (fault_) return;
          const auto from = told.shard;
          if (auto problem = steps_.add_squares(std::move(told), version_))
            return fail(fmt::format("table shard {}: {}", from, *problem));
          advance();
        },
        [this](peers_atom, std::vector<TableShardPeer>& peers) -> caf::result<bool> {
          if (peers.size() != setup_.count)
            return refuse(fmt::format("told {} peers, but there are {} table shards", peers.size(), setup_.count));
          peers_ = std::move(peers);
          peers_[setup_.index] = TableShardPeer{};  // it never tells itself, and need not keep itself alive
          return true;
        },
        [this](tables_atom, std::uint64_t version) -> caf::result<PulledRows> {
          if (fault_) return refuse(*fault_);
          if (version <= version_) return tables_.all_rows(version_);
          auto promise = make_response_promise<PulledRows>();
          waiting_dumps_.emplace_back(version, promise);
          return promise;
        },
        [this](scored_atom, std::uint64_t version, bool best) {
          if (fault_) return;
          // Sync: the shard is at `version`, held there for this evaluation (or at the end, for the final one).
          if (best) best_rows_ = tables_.all_rows(version_);
          if (!sync()) return;
          scored_.insert(version);
          advance();
        },
        [this](best_tables_atom) -> caf::result<PulledRows> {
          if (fault_) return refuse(*fault_);
          if (best_rows_) return *best_rows_;
          return tables_.all_rows(version_);
        },
        [this](table_state_atom, std::uint64_t version) -> caf::result<ShardTablesState> {
          if (fault_) return refuse(*fault_);
          if (sync() && version < version_)
            return refuse(fmt::format("checkpoint of the tables at version {}, but this shard has taken the steps "
                                      "up to version {} and keeps no older state",
                                      version, version_));
          if (version <= version_) {
            auto state = state_for_checkpoint();
            if (sync()) advance();  // the step it held back may go now
            return state;
          }
          auto promise = make_response_promise<ShardTablesState>();
          waiting_states_.emplace_back(version, promise);
          return promise;
        },
    };
  }

 private:
  void on_exit() override {
    peers_.clear();
    waiting_pulls_.clear();
    waiting_dumps_.clear();
    waiting_states_.clear();
  }

  bool sync() const { return setup_.mode == TrainingMode::sync; }
  bool exchanges_squares() const { return setup_.count > 1 && tables_.grad_clip() > 0.0; }

  static caf::error refuse(std::string why) { return caf::make_error(caf::sec::invalid_argument, std::move(why)); }

  // Async: the push's tables, each clipped by the norm of the worker's whole gradient of it.
  bool apply_now(const RowPush& push) {
    for (std::size_t i = 0; i < push.tables.size(); ++i) {
      const auto status = tables_.apply(push.tables[i].table, push.tables[i].rows, push.squares[i]);
      if (!status) {
        fail(status.error());
        return false;
      }
    }
    ++version_;
    answer_waiting();
    return true;
  }

  // Sync: the rows of a pull at this shard's version; an evaluator's lets that version's step go.
  PulledRows answer(const RowPull& pull) {
    auto rows = tables_.rows(pull, version_);
    if (pull.evaluation) evaluated_.insert(pull.version);
    return rows;
  }

  // Takes every step it can: gathered, summed (its squares told to the other shards), every other shard's
  // squares in, and not held for an evaluation.
  void advance() {
    while (!fault_ && steps_.gathered(version_)) {
      if (auto told = steps_.sum(version_))
        for (std::size_t i = 0; i < peers_.size(); ++i)
          if (i != setup_.index) send(peers_[i], table_squares_atom::value, *told);
      if (!steps_.complete(version_)) return;
      if (setup_.holds.at(version_) && !evaluation_done(version_)) return;
      if (setup_.checkpoint_holds.at(version_) && checkpointed_ != version_) return;
      const auto step = steps_.take(version_);
      if (setup_.pipelined) keep_rows_before(step);
      for (std::size_t t = 0; t < step.gradients.size(); ++t) {
        if (step.gradients[t].keys.empty()) continue;  // no worker touched the table's keys here
        const auto status = tables_.apply(static_cast<std::uint32_t>(t), step.gradients[t], step.squares[t]);
        if (!status) return fail(status.error());
      }
      evaluated_.erase(version_);
      scored_.erase(version_);
      ++version_;
      answer_waiting();
    }
  }

  // Pipelined sync: the rows the step is about to change, as they are before it.
  void keep_rows_before(const SyncRowSteps::Step& step) {
    RowPull touched;
    for (std::size_t t = 0; t < step.gradients.size(); ++t)
      if (!step.gradients[t].keys.empty())
        touched.tables.push_back(TableKeys{static_cast<std::uint32_t>(t), step.gradients[t].keys});
    rows_before_step_ = tables_.rows(touched, version_);
  }

  // Pipelined sync: a pull of the version before this shard's, answered with the rows of that version:
  // the current ones, but those the last step changed as they were before it.
  PulledRows rows_before_step(const RowPull& pull) const {
    auto rows = tables_.rows(pull, version_);
    rows.version = pull.version;
    for (auto& answer : rows.tables) {
      const auto before = std::find_if(rows_before_step_->tables.begin(), rows_before_step_->tables.end(),
                                       [&](const TableRows& kept) { return kept.table == answer.table; });
      if (before == rows_before_step_->tables.end()) continue;
      // Both key lists are sorted: one pass finds the keys the step changed.
      const auto& kept = before->rows;
      std::size_t k = 0;
      for (std::size_t i = 0; i < answer.rows.keys.size(); ++i) {
        while (k < kept.keys.size() && kept.keys[k] < answer.rows.keys[i]) ++k;
        if (k < kept.keys.size() && kept.keys[k] == answer.rows.keys[i])
          std::copy(kept.row(k), kept.row(k) + kept.width, answer.rows.row(i));
      }
    }
    return rows;
  }

  // Sync: whether an evaluation point's step may go: its rows are pulled, and with save_best it is scored.
  bool evaluation_done(std::uint64_t version) const {
    return evaluated_.count(version) > 0 && (!setup_.keeps_best || scored_.count(version) > 0);
  }

  void answer_waiting() {
    for (auto it = waiting_pulls_.begin(); it != waiting_pulls_.end();) {
      if (it->first.version > version_) {
        ++it;
        continue;
      }
      it->second.deliver(answer(it->first));
      it = waiting_pulls_.erase(it);
    }
    for (auto it = waiting_dumps_.begin(); it != waiting_dumps_.end();) {
      if (it->first > version_) {
        ++it;
        continue;
      }
      it->second.deliver(tables_.all_rows(version_));
      it = waiting_dumps_.erase(it);
    }
    for (auto it = waiting_states_.begin(); it != waiting_states_.end();) {
      if (it->first > version_) {
        ++it;
        continue;
      }
      it->second.deliver(state_for_checkpoint());
      it = waiting_states_.erase(it);
    }
  }

  // The tables as they are now; the step held back for this checkpoint (sync) may go once it is read.
  ShardTablesState state_for_checkpoint() {
    checkpointed_ = version_;
    return tables_.state(version_);
  }

  // A fault makes every later request fail with it, and those waiting now.
  void fail(std::string why) {
    fault_ = std::move(why);
    for (auto& waiting : waiting_pulls_) waiting.second.deliver(refuse(*fault_));
    for (auto& waiting : waiting_dumps_) waiting.second.deliver(refuse(*fault_));
    for (auto& waiting : waiting_states_) waiting.second.deliver(refuse(*fault_));
    waiting_pulls_.clear();
    waiting_dumps_.clear();
    waiting_states_.clear();
  }

  EmbeddingShardSetup setup_;
  ShardTables tables_;
  std::uint64_t version_;  // steps applied
  SyncRowSteps steps_;
  std::vector<TableShardPeer> peers_;
  std::set<std::uint64_t> evaluated_;  // sync: versions the evaluator has pulled
  std::set<std::uint64_t> scored_;     // sync, save_best: versions the evaluator has scored
  std::optional<PulledRows> best_rows_;  // save_best: every row as it was at the best evaluation so far
  std::optional<PulledRows> rows_before_step_;  // pipelined sync: the last step's rows as they were before it
  std::vector<std::pair<RowPull, caf::typed_response_promise<PulledRows>>> waiting_pulls_;
  std::vector<std::pair<std::uint64_t, caf::typed_response_promise<PulledRows>>> waiting_dumps_;
  std::vector<std::pair<std::uint64_t, caf::typed_response_promise<ShardTablesState>>> waiting_states_;
  std::optional<std::uint64_t> checkpointed_;  // the last version whose state a checkpoint read
  std::optional<std::string> fault_;
};

}  // namespace

Result<EmbeddingShardActor> spawn_embedding_shard(caf::actor_system& system, const EmbeddingShardSetup& setup) {
  if (setup.workers == 0) return Error{"table shards need at least one worker"};
  auto tables = ShardTables::make(setup.index, setup.count, setup.tables, setup.optimizer, setup.run_optimizer);
  if (!tables) return Error{tables.error()};
  if (!setup.restore.empty())
    if (auto restored = tables->restore(setup.restore); !restored)
      return Error{fmt::format("table shard {}: checkpoint: {}", setup.index, restored.error())};
  return system.spawn<EmbeddingShard>(setup, std::move(tables).value());
}

}  // namespace psgrad
