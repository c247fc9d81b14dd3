#include "actors/coordinator.hpp"

#include <optional>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "model/run_limits.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

namespace {

struct Slot {
  bool reserved = false;
  caf::actor_addr reserved_by;  // the process's actor that said hello
  DataWorkerActor worker;       // set once joined
  std::string host;
  // The driver watches it (it started with the run or was handed over), so its loss is the driver's.
  bool with_driver = false;
};

class Coordinator : public CoordinatorActor::base {
 public:
  Coordinator(caf::actor_config& config, CoordinatorSetup setup)
      : CoordinatorActor::base(config), setup_(std::move(setup)), slots_(setup_.num_workers) {
    set_down_handler([this](caf::down_msg& down) { on_down(down); });
  }

  behavior_type make_behavior() override {
    return {
        [this](hello_atom, std::uint32_t protocol, const std::string& token,
               const std::string& host) -> caf::result<JoinOffer> { return hello(protocol, token, host); },
        [this](join_atom, const JoinRequest& request) -> caf::result<std::uint32_t> { return join(request); },
        [this](driver_atom, const TrainingDriverActor& driver) {
          driver_ = driver;
          // Workers that joined the running job before the driver was known are its from now on.
          for (std::uint32_t k = 0; k < slots_.size(); ++k)
            if (slots_[k].worker && !slots_[k].with_driver) hand_to_driver(k);
        },
        [this](shard_hello_atom, std::uint32_t protocol, const std::string& token,
               std::uint32_t shard) -> caf::result<JoinOffer> {
          if (protocol != protocol_version)
            return refuse_shard(shard, fmt::format("protocol version {} does not match the server's {}", protocol,
                                                   protocol_version));
          if (token != setup_.token) return refuse_shard(shard, "wrong join token");
          if (shard == 0 || shard > setup_.remote_shards)
            return refuse_shard(shard, fmt::format("this run expects shards 1 to {} from other processes",
                                                   setup_.remote_shards));
          if (shards_[shard - 1]) return refuse_shard(shard, fmt::format("shard {} has already joined", shard));
          JoinOffer offer{protocol_version, shard, setup_.remote_shards + 1, setup_.config};
          offer.host_identity = setup_.host_identity;
          offer.input_width = setup_.input_width;
          offer.num_classes = setup_.num_classes;
          offer.number_names = setup_.number_names;
          if (setup_.resume_server) {
            offer.resume = true;
            offer.resume_server = *setup_.resume_server;
          }
          return offer;
        },
        [this](join_shard_atom, std::uint32_t shard, const ParameterServerActor& server, std::uint64_t layout_hash,
               const std::string& host, std::uint16_t port,
               const std::string& host_identity) -> caf::result<std::uint32_t> {
          if (shard == 0 || shard > setup_.remote_shards || shards_[shard - 1] || !server)
            return refuse_shard(shard, fmt::format("shard {} was not expected", shard));
          if (host.empty() || port == 0)
            return refuse_shard(shard, fmt::format("shard {} gave no address for workers to reach it", shard));
          const auto expected = setup_.shard_layout_hash != 0 ? setup_.shard_layout_hash : setup_.layout_hash;
          if (layout_hash != expected)
            return refuse_shard(shard, fmt::format("model layout {:016x} differs from the server's {:016x}",
                                                   layout_hash, expected));
          shards_[shard - 1] = server;
          monitor(server);
          addresses_.push_back(ShardAddress{shard, host, port, server, host_identity});
          if (setup_.tally) ++setup_.tally->shards_joined;
          event(fmt::format("server shard {} joined; workers reach it at {}:{}", shard, host, port));
          maybe_start();
          return shard;
        },
        [this](shards_atom) { return shards_; },
        [this](shard_addresses_atom) -> caf::result<std::uint32_t, std::vector<ShardAddress>> {
          return {setup_.remote_shards, addresses_};
        },
        [this](wait_atom) -> caf::typed_response_promise<std::vector<DataWorkerActor>, std::vector<std::string>> {
          waiting_ = make_response_promise<std::vector<DataWorkerActor>, std::vector<std::string>>();
          if (!shard_lost_.empty()) {
            waiting_.deliver(caf::make_error(caf::sec::runtime_error, shard_lost_));
            return waiting_;
          }
          // The server asks in short slices; the run may have started on a slice whose asker had
          // already given up, so a later ask gets the same answer.
          if (run_ == Run::under_way) waiting_.deliver(started_workers_, started_hosts_);
          else maybe_start();
          return waiting_;
        },
        [](ping_atom) { return pong_atom::value; },
        // The table shards' registry answers for itself: this actor only is the run's published address.
        [this](table_hello_atom atom, std::uint32_t protocol, const std::string& token,
               std::uint32_t index) -> caf::result<JoinOffer> {
          if (!setup_.tables) return no_tables();
          return delegate(setup_.tables, atom, protocol, token, index);
        },
        [this](table_join_atom atom, const TableShardJoin& join) -> caf::result<std::uint32_t> {
          if (!setup_.tables) return no_tables();
          return delegate(setup_.tables, atom, join);
        },
        [this](table_shards_atom atom, const TableLayout& layout,
               const std::string& who) -> caf::result<std::vector<TableShardAddress>> {
          if (!setup_.tables) return no_tables();
          return delegate(setup_.tables, atom, layout, who);
        },
        [this](table_start_atom atom, std::uint32_t index) -> caf::result<TableShardStart> {
          if (!setup_.tables) return no_tables();
          return delegate(setup_.tables, atom, index);
        },
        [this](table_rows_atom atom, std::uint32_t index, std::uint32_t piece) -> caf::result<ShardTablesState> {
          if (!setup_.tables) return no_tables();
          return delegate(setup_.tables, atom, index, piece);
        },
    };
  }

 private:
  caf::error refuse(const std::string& host, const std::string& reason) {
    if (setup_.tally) ++setup_.tally->refused;
    event(fmt::format("refused worker from {}: {}", host, reason));
    return caf::make_error(caf::sec::request_receiver_down, reason);
  }

  caf::error no_tables() {
    return caf::make_error(caf::sec::request_receiver_down, "this run's model has no embedding tables");
  }

  caf::error refuse_shard(std::uint32_t shard, const std::string& reason) {
    if (setup_.tally) ++setup_.tally->shards_refused;
    event(fmt::format("refused shard process {}: {}", shard, reason));
    return caf::make_error(caf::sec::request_receiver_down, reason);
  }

  caf::result<JoinOffer> hello(std::uint32_t protocol, const std::string& token, const std::string& host) {
    if (protocol != protocol_version)
      return refuse(host, fmt::format("protocol version {} does not match the server's {}", protocol,
                                      protocol_version));
    if (token != setup_.token) return refuse(host, "wrong join token");
    if (run_ == Run::under_way && !setup_.elastic) return refuse(host, "training has already started; join the next run");
    // An elastic job that is running grows by one place per newcomer, up to the most a run takes.
    if (run_ == Run::under_way && std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.reserved; })) {
      if (slots_.size() >= static_cast<std::size_t>(max_workers))
        return refuse(host, fmt::format("the run already has {} workers, the most one run takes", max_workers));
      slots_.emplace_back();
    }
    for (std::uint32_t k = 0; k < slots_.size(); ++k) {
      if (slots_[k].reserved) continue;
      slots_[k].reserved = true;
      slots_[k].reserved_by = caf::actor_cast<caf::actor_addr>(current_sender());
      slots_[k].host = host;
      monitor(caf::actor_cast<caf::actor>(current_sender()));
      JoinOffer offer{protocol_version, k, static_cast<std::uint32_t>(slots_.size()), setup_.config};
      offer.host_identity = setup_.host_identity;
      for (const auto& stream : setup_.resume_streams)
        if (stream.worker == k) {
          offer.resume = true;
          offer.stream = stream;
        }
      return offer;
    }
    return refuse(host, fmt::format("the run already has its {} workers", setup_.num_workers));
  }

  caf::result<std::uint32_t> join(const JoinRequest& request) {
    const auto host = request.host;
    if (run_ == Run::under_way && !setup_.elastic) return refuse(host, "training has already started; join the next run");
    if (request.worker_index >= slots_.size() || !slots_[request.worker_index].reserved ||
        slots_[request.worker_index].worker)
      return refuse(host, fmt::format("worker index {} was not offered to this worker", request.worker_index));
    auto& slot = slots_[request.worker_index];
    std::string mismatch;
    if (request.input_width != setup_.input_width || request.num_classes != setup_.num_classes)
      mismatch = fmt::format("data set shape {} inputs x {} classes differs from the server's {} x {}",
                             request.input_width, request.num_classes, setup_.input_width,
                             setup_.num_classes);
    else if (auto differs = setup_.data.empty() ? std::nullopt : data_difference(request.data, setup_.data))
      mismatch = *differs;
    else if (request.layout_hash != setup_.layout_hash)
      mismatch = fmt::format("model layout {:016x} differs from the server's {:016x}", request.layout_hash,
                             setup_.layout_hash);
    else if (request.train_count == 0)
      mismatch = "the worker has no training data";
    else if (!request.worker)
      mismatch = "no worker actor";
    if (!mismatch.empty()) {
      release(request.worker_index);
      return refuse(host, mismatch);
    }
    slot.worker = request.worker;
    monitor(slot.worker);
    ++joined_;
    count_joined();
    if (run_ == Run::under_way) {
      event(fmt::format("worker {} joined the running job from {}", request.worker_index, host));
      // Before the driver is known the worker waits here, and its loss is still ours to notice.
      if (driver_) hand_to_driver(request.worker_index);
      return joined_;
    }
    event(fmt::format("worker {} joined from {} ({} of {})", request.worker_index, host, joined_,
                      setup_.num_workers));
    maybe_start();
    return joined_;
  }

  void maybe_start() {
    if (run_ == Run::under_way || joined_ < setup_.num_workers || !waiting_.pending()) return;
    for (const auto& shard : shards_)
      if (!shard) return;
    run_ = Run::under_way;
    for (auto& slot : slots_) {
      if (!slot.worker) continue;
      slot.with_driver = true;
      started_workers_.push_back(slot.worker);
      started_hosts_.push_back(slot.host);
    }
    waiting_.deliver(started_workers_, started_hosts_);
  }

  void hand_to_driver(std::uint32_t k) {
    slots_[k].with_driver = true;
    caf::anon_send(driver_, add_worker_atom::value, slots_[k].worker, slots_[k].host, k);
  }

  void release(std::uint32_t k) {
    if (slots_[k].worker) --joined_;
    slots_[k] = Slot{};
    count_joined();
  }

  void count_joined() {
    if (setup_.tally) setup_.tally->workers_joined = joined_;
  }

  // A process that reserved a place and went away gives it back, before training or during it (an
  // elastic newcomer takes it); a worker the driver watches is the driver's to drop.
  void on_down(const caf::down_msg& down) {
    // A shard process lost before the run starts: the workers cannot reach it, and the server waiting
    // for them would wait until cluster.join_timeout_ms. Once the run is under way the driver watches it.
    for (std::uint32_t k = 0; k < shards_.size(); ++k) {
      if (!shards_[k] || shards_[k].address() != down.source || run_ != Run::gathering || !shard_lost_.empty())
        continue;
      const auto why = down.reason == caf::exit_reason::remote_link_unreachable
                           ? std::string("its connection dropped (the process died, froze or lost the network)")
                           : down.reason ? error_text(system(), down.reason) : std::string("it stopped");
      shard_lost_ = fmt::format("parameter server shard {} lost before training started: {}", k + 1, why);
      if (waiting_.pending()) waiting_.deliver(caf::make_error(caf::sec::runtime_error, shard_lost_));
    }
    for (std::uint32_t k = 0; k < slots_.size(); ++k) {
      auto& slot = slots_[k];
      const bool was_worker = slot.worker && slot.worker.address() == down.source;
      if (!slot.reserved || slot.with_driver || !(slot.reserved_by == down.source || was_worker)) continue;
      event(fmt::format("worker {} from {} left before {}", k, slot.host,
                        run_ == Run::under_way ? "it took part in the running job" : "training started"));
      release(k);
    }
  }

  void event(const std::string& line) {
    if (setup_.on_event) setup_.on_event(line);
  }

  CoordinatorSetup setup_;
  std::vector<Slot> slots_;
  std::uint32_t joined_ = 0;
  // Whether the run's workers are gathering still, or it started (and takes elastic joiners only).
  enum class Run { gathering, under_way };
  Run run_ = Run::gathering;
  caf::typed_response_promise<std::vector<DataWorkerActor>, std::vector<std::string>> waiting_;
  std::vector<DataWorkerActor> started_workers_;  // what the run started with, for every later ask
  std::vector<std::string> started_hosts_;
  TrainingDriverActor driver_;
  std::vector<ParameterServerActor> shards_ = std::vector<ParameterServerActor>(setup_.remote_shards);
  std::vector<ShardAddress> addresses_;  // in the order the shards joined
  std::string shard_lost_;               // the first shard process lost before the run started
};

}  // namespace

CoordinatorActor spawn_coordinator(caf::actor_system& system, CoordinatorSetup setup) {
  return system.spawn<Coordinator>(std::move(setup));
}

}  // namespace psgrad
