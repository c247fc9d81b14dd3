// Tests for the minibatcher: permutations per epoch, partial batches, seeds, and resuming a stream.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "model/minibatcher.hpp"

using namespace psgrad;

namespace {

constexpr std::size_t kClasses = 3;

// Example i has inputs (i, 1000 + i) and label i % 3, so a batch row tells which example it is.
std::shared_ptr<const Dataset> numbered_data(std::size_t count) {
  auto data = std::make_shared<Dataset>();
  data->count = count;
  data->width = 2;
  data->num_classes = kClasses;
  data->image_rows = 1;
  data->image_cols = 2;
  for (std::size_t i = 0; i < count; ++i) {
    data->inputs.push_back(static_cast<float>(i));
    data->inputs.push_back(static_cast<float>(1000 + i));
    data->labels.push_back(static_cast<std::uint8_t>(i % kClasses));
    for (std::size_t c = 0; c < kClasses; ++c) data->targets.push_back(c == i % kClasses ? 1.0f : 0.0f);
  }
  return data;
}

std::vector<std::size_t> example_ids(const Minibatcher::Batch& batch) {
  std::vector<std::size_t> ids;
  for (std::size_t row = 0; row < batch.size; ++row) {
    ids.push_back(static_cast<std::size_t>(batch.inputs(static_cast<Eigen::Index>(row), 0)));
  }
  return ids;
}

// The example order of the batcher's current epoch, read by serving it to the end.
std::vector<std::size_t> serve_epoch(Minibatcher& batcher) {
  const std::uint64_t epoch = batcher.epoch();
  std::vector<std::size_t> order;
  while (batcher.epoch() == epoch) {
    const auto ids = example_ids(batcher.next());
    order.insert(order.end(), ids.begin(), ids.end());
  }
  return order;
}

std::vector<std::size_t> serve_batches(Minibatcher& batcher, int batches) {
  std::vector<std::size_t> stream;
  for (int i = 0; i < batches; ++i) {
    const auto ids = example_ids(batcher.next());
    stream.insert(stream.end(), ids.begin(), ids.end());
    stream.push_back(static_cast<std::size_t>(-1));  // batch boundary, so sizes are compared too
  }
  return stream;
}

std::vector<std::size_t> identity(std::size_t count) {
  std::vector<std::size_t> ids(count);
  std::iota(ids.begin(), ids.end(), std::size_t{0});
  return ids;
}

}  // namespace

TEST_CASE("minibatcher serves every example exactly once per epoch") {
  Minibatcher batcher(numbered_data(10), 4, 7);
  for (int epoch = 0; epoch < 4; ++epoch) {
    auto order = serve_epoch(batcher);
    CHECK(order.size() == 10);
    std::sort(order.begin(), order.end());
    CHECK(order == identity(10));
  }
  CHECK(batcher.epoch() == 4);
}

TEST_CASE("minibatcher keeps the last partial batch: 10 examples in batches of 4 give 4, 4, 2, 4") {
  Minibatcher batcher(numbered_data(10), 4, 1);
  std::vector<std::size_t> sizes, epochs;
  for (int i = 0; i < 7; ++i) {
    const auto batch = batcher.next();
    CHECK(batch.inputs.rows() == static_cast<Eigen::Index>(batch.size));
    CHECK(batch.targets.rows() == static_cast<Eigen::Index>(batch.size));
    CHECK(batch.inputs.cols() == 2);
    CHECK(batch.targets.cols() == static_cast<Eigen::Index>(kClasses));
    sizes.push_back(batch.size);
    epochs.push_back(batcher.epoch());
  }
  CHECK(sizes == std::vector<std::size_t>{4, 4, 2, 4, 4, 2, 4});
  // The next epoch begins as soon as the partial batch is served.
  CHECK(epochs == std::vector<std::size_t>{0, 0, 1, 1, 1, 2, 2});
}

TEST_CASE("minibatcher with a batch larger than the data set serves whole epochs") {
  Minibatcher batcher(numbered_data(5), 64, 3);
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto batch = batcher.next();
    CHECK(batch.size == 5);
    CHECK(batcher.epoch() == static_cast<std::uint64_t>(epoch + 1));
  }
}

TEST_CASE("minibatcher shuffles each epoch into a different order") {
  Minibatcher batcher(numbered_data(50), 8, 11);
  const auto first = serve_epoch(batcher);
  const auto second = serve_epoch(batcher);
  const auto third = serve_epoch(batcher);
  CHECK(first != identity(50));
  CHECK(first != second);
  CHECK(second != third);
}

TEST_CASE("minibatcher streams are fixed by the seed: same seed same stream, other seed another") {
  Minibatcher a(numbered_data(37), 6, 42);
  Minibatcher b(numbered_data(37), 6, 42);
  Minibatcher c(numbered_data(37), 6, 43);
  const auto stream_a = serve_batches(a, 30);
  CHECK(stream_a == serve_batches(b, 30));
  CHECK(stream_a != serve_batches(c, 30));
}

TEST_CASE("minibatcher restore() from a mid-epoch position continues the stream identically") {
  const auto data = numbered_data(23);
  Minibatcher original(data, 5, 2024);
  serve_batches(original, 7);  // one full epoch of 5 batches, then 2 into the second
  const Minibatcher::Position position = original.position();
  CHECK(position.epoch == 1);
  CHECK(position.cursor == 10);
  const auto expected = serve_batches(original, 12);

  Minibatcher resumed(data, 5, 999);  // the seed no longer matters once restored
  serve_batches(resumed, 3);
  resumed.restore(position);
  CHECK(resumed.epoch() == 1);
  CHECK(resumed.position().cursor == 10);
  CHECK(serve_batches(resumed, 12) == expected);
}

TEST_CASE("minibatcher restore() at an epoch boundary continues the stream identically") {
  const auto data = numbered_data(12);
  Minibatcher original(data, 4, 5);
  serve_batches(original, 6);  // exactly two epochs
  const auto position = original.position();
  CHECK(position.epoch == 2);
  CHECK(position.cursor == 0);
  const auto expected = serve_batches(original, 9);

  Minibatcher resumed(data, 4, 6);
  resumed.restore(position);
  CHECK(serve_batches(resumed, 9) == expected);
}

TEST_CASE("minibatcher target rows are the one-hot labels of the input rows") {
  const auto data = numbered_data(17);
  Minibatcher batcher(data, 5, 8);
  for (int i = 0; i < 10; ++i) {
    const auto batch = batcher.next();
    for (std::size_t row = 0; row < batch.size; ++row) {
      const auto r = static_cast<Eigen::Index>(row);
      const auto example = static_cast<std::size_t>(batch.inputs(r, 0));
      CHECK(batch.inputs(r, 1) == static_cast<float>(1000 + example));
      for (std::size_t c = 0; c < kClasses; ++c) {
        CHECK(batch.targets(r, static_cast<Eigen::Index>(c)) == (c == data->labels[example] ? 1.0f : 0.0f));
      }
    }
  }
}

TEST_CASE("minibatcher gathers every batch into the same buffers") {
  Minibatcher batcher(numbered_data(10), 4, 0);
  const auto first = batcher.next();
  for (int i = 0; i < 5; ++i) {
    const auto batch = batcher.next();
    CHECK(batch.inputs.data() == first.inputs.data());
    CHECK(batch.targets.data() == first.targets.data());
  }
}

TEST_CASE("minibatcher rejects a zero batch size or an empty data set") {
  CHECK_THROWS_AS(Minibatcher(numbered_data(10), 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(Minibatcher(numbered_data(0), 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(Minibatcher(nullptr, 4, 1), std::invalid_argument);
}

TEST_CASE("a data set that borrows its inputs gives the batches of one that owns them, and reads them where they lie") {
  const auto owned = numbered_data(10);
  // The caller's buffer, one float off a 64-byte boundary as a NumPy array may be.
  auto buffer = std::make_shared<std::vector<float>>(1 + owned->inputs.size());
  std::copy(owned->inputs.begin(), owned->inputs.end(), buffer->begin() + 1);
  auto borrowing = std::make_shared<Dataset>(*owned);
  borrowing->inputs.clear();
  borrowing->borrowed_inputs = buffer->data() + 1;
  borrowing->borrowed_owner = buffer;
  CHECK(borrowing->input_size() == owned->inputs.size());

  Minibatcher from_owned(owned, 4, 7), from_borrowed(borrowing, 4, 7);
  CHECK(serve_batches(from_borrowed, 5) == serve_batches(from_owned, 5));
  // Where the inputs lie is where the batches come from.
  (*buffer)[1 + 2 * 3] = 99.0f;  // example 3's first input
  Minibatcher rewritten(borrowing, 10, 7);
  const auto batch = rewritten.next();
  bool saw_rewritten = false;
  for (Eigen::Index row = 0; row < static_cast<Eigen::Index>(batch.size); ++row)
    saw_rewritten = saw_rewritten || (batch.inputs(row, 0) == 99.0f && batch.inputs(row, 1) == 1003.0f);
  CHECK(saw_rewritten);
}
