// Steady-state training steps must not touch the heap: counts every malloc-family call made on this
// thread while a step runs, after warm-up, for compute_gradients, Adam and the minibatcher.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <string>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "payloads/float_buffer.hpp"
#include "runtime/idle_help.hpp"
#include "actors/data_worker.hpp"
#include "actors/local_training.hpp"
#include "runtime/model_workspaces.hpp"
#include "runtime/ring_queue.hpp"
#include "payloads/shared_memory.hpp"
#include "actors/training_job.hpp"
#include "model/minibatcher.hpp"
#include "model/model.hpp"
#include "tests/actor_fixtures.hpp"

// The counter sits at malloc, not at operator new: Eigen's GEMM blocking buffers and the model's
// AlignedAllocator call malloc / aligned_alloc directly, which a replaced operator new never sees
// (and libstdc++'s operator new calls malloc, so C++ allocations are counted too). Every function
// forwards to glibc's own implementation, and counts only on a thread whose flag is set, so the
// other tests linked into this binary run exactly as without it.
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* pointer);
}

namespace {

// Constant-initialized thread_locals of the executable live in static TLS: reading them from
// inside malloc never allocates.
thread_local bool counting = false;
thread_local std::size_t allocation_count = 0;
thread_local std::size_t allocated_bytes = 0;
thread_local std::array<std::size_t, 8> first_sizes{};

// Across every thread, for whole actor runs (CAF's scheduler and the detached workers included).
std::atomic<bool> counting_everywhere{false};
std::atomic<std::size_t> allocations_everywhere{0};

void note_allocation(std::size_t size) {
  if (counting_everywhere.load(std::memory_order_relaxed))
    allocations_everywhere.fetch_add(1, std::memory_order_relaxed);
  if (!counting) return;
  if (allocation_count < first_sizes.size()) first_sizes[allocation_count] = size;
  ++allocation_count;
  allocated_bytes += size;
}

}  // namespace

extern "C" {
void* malloc(std::size_t size) {
  note_allocation(size);
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  note_allocation(count * size);
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, std::size_t size) {
  note_allocation(size);
  return __libc_realloc(pointer, size);
}
void free(void* pointer) { __libc_free(pointer); }
void* memalign(std::size_t alignment, std::size_t size) {
  note_allocation(size);
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  note_allocation(size);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  note_allocation(size);
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* pointer = __libc_memalign(alignment, size);
  if (!pointer) return ENOMEM;
  *out = pointer;
  return 0;
}
}

using namespace psgrad;

namespace {

constexpr std::size_t kIterations = 20;

struct IterationCounts {
  std::array<std::size_t, kIterations> allocations{};
  std::array<std::size_t, kIterations> bytes{};
  std::array<std::size_t, 8> first_sizes{};  // of the first iteration that allocated
  std::size_t total() const {
    std::size_t sum = 0;
    for (auto count : allocations) sum += count;
    return sum;
  }
  std::string describe() const {
    std::string text = "allocations per iteration:";
    for (std::size_t i = 0; i < kIterations; ++i)
      text += " " + std::to_string(allocations[i]) + " (" + std::to_string(bytes[i]) + " B)";
    text += "; first sizes:";
    for (auto size : first_sizes)
      if (size) text += " " + std::to_string(size);
    return text;
  }
};

// Runs step kIterations times, counting each call on its own. Nothing between the flag flips may
// allocate on behalf of the harness itself: the counts land in preallocated arrays.
template <class Step>
IterationCounts count_allocations(Step&& step) {
  IterationCounts counts;
  for (std::size_t i = 0; i < kIterations; ++i) {
    allocation_count = 0;
    allocated_bytes = 0;
    first_sizes.fill(0);
    counting = true;
    step();
    counting = false;
    counts.allocations[i] = allocation_count;
    counts.bytes[i] = allocated_bytes;
    if (allocation_count && counts.first_sizes[0] == 0) counts.first_sizes = first_sizes;
  }
  return counts;
}

// The tutorial's shapes (784-128-128-10, dropout 0.2, batch 128): Eigen's blocking sizes, and so
// whether its GEMM needs heap buffers, depend on them.
TrainingJob tutorial_job() { return TrainingJob{}; }

std::shared_ptr<const Dataset> digits_like_data(std::size_t count) {
  return testing::synthetic_data(count, 784, 10, 5);
}

}  // namespace

TEST_CASE("the counter sees a heap allocation made while counting") {
  // Through a volatile pointer: the compiler may otherwise drop a malloc/free pair altogether.
  void* (*volatile allocate)(std::size_t) = malloc;
  const auto counts = count_allocations([&] { free(allocate(100)); });
  CHECK(counts.allocations[0] == 1);
  CHECK(counts.bytes[0] == 100);
}

TEST_CASE("Model::compute_gradients does not allocate once warmed up (batch 128, 784-128-128-10)") {
  const auto job = tutorial_job();
  const auto data = digits_like_data(job.training.batch_size);
  auto model = build_initialized_model(job, data->width, data->num_classes).value();
  const ConstMatrixMap inputs(data->inputs.data(), static_cast<Eigen::Index>(data->count),
                              static_cast<Eigen::Index>(data->width));
  const ConstMatrixMap targets(data->targets.data(), static_cast<Eigen::Index>(data->count),
                               static_cast<Eigen::Index>(data->num_classes));
  Random dropout(3);
  for (int i = 0; i < 3; ++i) model.compute_gradients(inputs, targets, dropout);  // sizes buffers once
  const auto counts = count_allocations([&] { model.compute_gradients(inputs, targets, dropout); });
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}

TEST_CASE("Adam::apply_gradients does not allocate once warmed up") {
  const auto job = tutorial_job();
  auto model = build_initialized_model(job, 784, 10).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  std::vector<float> gradients(model.parameter_count(), 0.01f);
  for (int i = 0; i < 2; ++i) optimizer->apply_gradients(model.weights_data(), gradients.data());
  const auto counts =
      count_allocations([&] { optimizer->apply_gradients(model.weights_data(), gradients.data()); });
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}

TEST_CASE("Minibatcher::next does not allocate, across epoch boundaries too") {
  // 300 examples in batches of 128: every third call ends an epoch and reshuffles.
  Minibatcher batches(digits_like_data(300), 128, 11);
  for (int i = 0; i < 3; ++i) batches.next();
  const auto counts = count_allocations([&] { batches.next(); });
  CHECK(batches.epoch() >= kIterations / 3);
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}

TEST_CASE("a worker's step on received weights into a pooled payload does not allocate") {
  // What DataWorker does per request: compute on the message's weights, write into a pool buffer.
  const auto job = tutorial_job();
  const auto data = digits_like_data(job.training.batch_size);
  auto model = build_model(job, data->width, data->num_classes).value();
  const auto weights = FloatBuffer::copy_of(model.weights().data(), model.weights().size());
  const ConstMatrixMap inputs(data->inputs.data(), static_cast<Eigen::Index>(data->count),
                              static_cast<Eigen::Index>(data->width));
  const ConstMatrixMap targets(data->targets.data(), static_cast<Eigen::Index>(data->count),
                               static_cast<Eigen::Index>(data->num_classes));
  Random dropout(3);
  BufferPool pool(model.parameter_count());
  auto step = [&] {
    auto buffer = pool.acquire();
    model.compute_gradients(weights.data(), buffer->data(), inputs, targets, dropout);
  };
  for (int i = 0; i < 3; ++i) step();
  const auto counts = count_allocations(step);
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}

TEST_CASE("a server step summing 2 gradients, in place and into a free buffer, does not allocate") {
  const auto job = tutorial_job();
  auto model = build_initialized_model(job, 784, 10).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  std::vector<float> first(model.parameter_count(), 0.01f), second(model.parameter_count(), -0.02f);
  const float* both[] = {first.data(), second.data()};
  BufferPool pool(model.parameter_count());
  auto current = pool.acquire();
  auto sync_step = [&] { optimizer->apply_gradients(current->data(), current->data(), both, 2); };
  auto async_step = [&] {
    auto held = current;  // a worker still reads these weights
    auto next = pool.acquire();
    optimizer->apply_gradients(current->data(), next->data(), both, 1);
    current = std::move(next);
  };
  for (int i = 0; i < 3; ++i) {
    sync_step();
    async_step();
  }
  const auto sync_counts = count_allocations(sync_step);
  CHECK_MESSAGE(sync_counts.total() == 0, sync_counts.describe());
  const auto async_counts = count_allocations(async_step);
  CHECK_MESSAGE(async_counts.total() == 0, async_counts.describe());
}

TEST_CASE("a server step split in two halves for idle help does not allocate") {
  const auto job = tutorial_job();
  auto model = build_initialized_model(job, 784, 10).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  IdleHelp help;  // no thread polls here: the caller runs both halves, through the same calls
  optimizer->split_steps_with(&help);
  std::vector<float> first(model.parameter_count(), 0.01f), second(model.parameter_count(), -0.02f);
  const float* both[] = {first.data(), second.data()};
  std::vector<float> weights(model.weights().begin(), model.weights().end());
  auto sync_step = [&] { optimizer->apply_gradients(weights.data(), weights.data(), both, 2); };
  for (int i = 0; i < 3; ++i) sync_step();
  const auto counts = count_allocations(sync_step);
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}

namespace {

// Every allocation any thread makes while `run` runs.
template <class Run>
std::size_t allocations_during(Run&& run) {
  allocations_everywhere = 0;
  counting_everywhere = true;
  run();
  counting_everywhere = false;
  return allocations_everywhere.load();
}

// The per-gradient cost of what psgrad's push/pull loop asks of CAF, with nothing of psgrad's own: a
// client requests (without a timeout, as a worker pushes) a server that answers through a response
// promise and tells a listener, `exchanges` times, the payloads psgrad's loop sends. The client runs
// where a local run puts its workers: on the scheduler's threads once there are as many workers as
// threads, otherwise detached. Scheduling an actor allocates nothing (psgrad's scheduler queue is a
// ring), so the count does not depend on how often an actor found its mailbox empty and slept: with
// CAF's work-sharing list it did, by about one allocation per exchange between hosts.
std::size_t caf_exchange_allocations(std::size_t exchanges, const FloatBuffer& values, bool detached_client) {
  return allocations_during([&] {
    ActorConfig config(2);
    caf::actor_system system{config};
    auto listener = system.spawn([](caf::event_based_actor*) -> caf::behavior {
      return {[](applied_atom, const StepNote&) {}};
    });
    auto server = system.spawn([listener, values](caf::event_based_actor* self) -> caf::behavior {
      return {[=](apply_atom, Gradients& gradients) -> caf::result<Weights> {
        auto promise = self->make_response_promise<Weights>();
        self->send(listener, applied_atom::value, StepNote{gradients.worker});
        promise.deliver(Weights{gradients.version + 1, 0, values});
        return promise;
      }};
    });
    caf::scoped_actor self{system};
    auto client_behavior = [=](caf::event_based_actor* client) -> caf::behavior {
      auto left = std::make_shared<std::size_t>(exchanges);
      auto push = std::make_shared<std::function<void()>>();
      *push = [=] {
        if ((*left)-- == 0) return client->quit();
        client->request(server, caf::infinite, apply_atom::value, Gradients{0, 0, 0, 1, 0.0f, values})
            .then([=](Weights&) { (*push)(); });
      };
      (*push)();
      return {[](int) {}};
    };
    auto client = detached_client ? system.spawn<caf::detached>(client_behavior) : system.spawn(client_behavior);
    self->wait_for(client);
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
  });
}

// One plain message (as the driver's credit to an async worker), sent from a detached actor.
std::size_t caf_send_allocations(std::size_t sends) {
  return allocations_during([&] {
    ActorConfig config(2);
    caf::actor_system system{config};
    auto receiver = system.spawn([](caf::event_based_actor*) -> caf::behavior {
      return {[](credit_atom, std::uint64_t) {}};
    });
    caf::scoped_actor self{system};
    auto sender = system.spawn<caf::detached>([=](caf::event_based_actor* sender) -> caf::behavior {
      for (std::size_t i = 0; i < sends; ++i) sender->send(receiver, credit_atom::value, std::uint64_t{1});
      sender->quit();
      return {[](int) {}};
    });
    self->wait_for(sender);
    caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
  });
}

std::size_t training_allocations(const TrainingJob& job, std::shared_ptr<const Dataset> data) {
  return allocations_during([&] {
    ActorConfig config(2);
    caf::actor_system system{config};
    auto summary = train_in_process(system, job, data, data, nullptr);
    REQUIRE(summary.ok());
  });
}

}  // namespace

TEST_CASE("the scheduler's job queue allocates nothing once it has held the most it will hold") {
  RingQueue<int> queue(4);
  for (int i = 0; i < 16; ++i) queue.push_back(i);  // grows twice
  while (!queue.empty()) queue.pop_front();
  int next = 0;
  const auto counts = count_allocations([&] {
    for (int i = 0; i < 16; ++i) queue.push_back(next++);
    while (!queue.empty()) queue.pop_front();
  });
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
  // Holding one more grows it once, in the first round only.
  const auto growing = count_allocations([&] {
    for (int i = 0; i < 17; ++i) queue.push_back(next++);
    while (!queue.empty()) queue.pop_front();
  });
  CHECK_MESSAGE(growing.allocations[0] == 1, growing.describe());
  CHECK_MESSAGE(growing.total() == 1, growing.describe());
}

TEST_CASE("a push/pull training step allocates only what CAF's own messages allocate") {
  const auto data = digits_like_data(512);
  const auto values = FloatBuffer::copy_of(std::vector<float>(1000, 0.5f).data(), 1000);
  // Differences between a short and a long run leave the per-step cost alone (set-up and shut-down
  // cancel out).
  const std::size_t few = 40, many = 440;
  // Where training_allocations' workers run: 2 workers on its 2 scheduler threads.
  const bool detached_workers = workers_detached(2, 2);
  const double caf_per_exchange = static_cast<double>(caf_exchange_allocations(many, values, detached_workers) -
                                                      caf_exchange_allocations(few, values, detached_workers)) /
                                  static_cast<double>(many - few);
  const double caf_per_send =
      static_cast<double>(caf_send_allocations(many) - caf_send_allocations(few)) / static_cast<double>(many - few);
  MESSAGE("CAF: " << caf_per_exchange << " allocations per request, its promised answer and a note; "
                  << caf_per_send << " per plain message");
  for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
    CAPTURE(mode_name(mode));
    auto job = tutorial_job();
    job.cluster.mode = mode;
    job.cluster.num_workers = 2;
    job.evaluation.frequency = 1000000;
    job.training.iterations = few;
    const auto short_run = training_allocations(job, data);
    job.training.iterations = many;
    const auto long_run = training_allocations(job, data);
    const double gradients = static_cast<double>((many - few) * job.cluster.num_workers);
    const double per_gradient = (static_cast<double>(long_run) - static_cast<double>(short_run)) / gradients;
    MESSAGE(mode_name(mode) << ": " << per_gradient << " allocations per gradient");
    // Async adds the driver's credit, one plain message per gradient.
    CHECK(per_gradient <= caf_per_exchange + (mode == TrainingMode::sync ? 0.0 : caf_per_send));
  }
}

TEST_CASE("a worker that borrows its models from the pool builds none of its own") {
  const auto job = tutorial_job();
  const auto data = digits_like_data(job.training.batch_size);
  ActorConfig config(2);
  caf::actor_system system{config};
  auto workspaces = std::make_shared<ModelWorkspaces>([&] {
    auto model = std::make_unique<Model>(build_model(job, data->width, data->num_classes).value());
    model->reserve(job.training.batch_size);
    return model;
  });
  workspaces->reserve(1);
  const std::size_t weight_bytes = workspaces->borrow().model().parameter_count() * sizeof(float);
  // Bytes allocated on this thread while spawning (CAF constructs the actor here, too).
  auto spawn_bytes = [&](std::shared_ptr<ModelWorkspaces> pool) {
    DataWorkerSetup setup{job, 0, data};
    setup.workspaces = std::move(pool);
    allocated_bytes = 0;
    counting = true;
    auto worker = spawn_data_worker(system, std::move(setup));
    counting = false;
    const auto bytes = allocated_bytes;
    REQUIRE(worker);
    caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
    return bytes;
  };
  const auto own = spawn_bytes(nullptr);
  const auto borrowing = spawn_bytes(workspaces);
  // A model of its own is a weight and a gradient buffer, and activation buffers. A borrowing worker
  // allocates less than the first two: its data stream (0.4 MB, the batch buffer) and the actor.
  CHECK(own >= 2 * weight_bytes);
  CHECK(borrowing < 2 * weight_bytes);
  CHECK(workspaces->models_made() == 1);
}

TEST_CASE("a payload put in and read from shared memory allocates nothing once warmed up") {
  // What a receiver on the sender's host does per message (FloatBuffer's read_shared): hold the floats
  // in the sender's slot, and let go once computed on. The holder's control block is recycled.
  accept_shared_memory(true);
  const std::vector<float> values(4096, 0.5f);
  float first = 0.0f;
  auto step = [&] {
    const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
    REQUIRE(reference);
    auto held = hold_in_shared_memory(*reference, values.size() * sizeof(float));
    REQUIRE(std::holds_alternative<std::shared_ptr<const void>>(held));
    first = *static_cast<const float*>(std::get<std::shared_ptr<const void>>(held).get());
  };
  for (int i = 0; i < 3; ++i) step();
  const auto counts = count_allocations(step);
  accept_shared_memory(false);
  CHECK(first == 0.5f);
  CHECK_MESSAGE(counts.total() == 0, counts.describe());
}
