// Tests for scoring a model: the confusion matrix agrees with the headline accuracy and with predictions.
#include <doctest/doctest.h>

#include <numeric>

#include "io/model_scoring.hpp"
#include "model/random.hpp"

using namespace psgrad;

namespace {

Dataset random_dataset(std::size_t count, std::size_t width, std::size_t classes) {
  Dataset data;
  data.count = count;
  data.width = width;
  data.num_classes = classes;
  data.inputs.resize(count * width);
  data.targets.assign(count * classes, 0.0f);
  Random rng(3);
  for (auto& x : data.inputs) x = static_cast<float>(rng.uniform());
  for (std::size_t i = 0; i < count; ++i) {
    data.labels.push_back(static_cast<std::uint8_t>(i % classes));
    data.targets[i * classes + i % classes] = 1.0f;
  }
  return data;
}

}  // namespace

TEST_CASE("the confusion matrix counts every example once and agrees with the accuracy") {
  auto model = Model::build("relu_relu_softmax.v1", Settings{{"hidden_width", std::int64_t{8}}, {"dropout", 0.0}}, 5, 4);
  REQUIRE(model.ok());
  model->initialize(11);
  const auto data = random_dataset(37, 5, 4);
  const auto scoring = score_model(*model, data, 8);
  CHECK(scoring.overall.count == 37);
  CHECK(std::accumulate(scoring.confusion.begin(), scoring.confusion.end(), std::size_t{0}) == 37);
  std::size_t correct = 0;
  for (std::size_t c = 0; c < 4; ++c) correct += scoring.count(c, c);
  CHECK(static_cast<double>(correct) / 37.0 == doctest::Approx(scoring.overall.accuracy));
  CHECK(scoring.class_total(0) == 10);  // labels 0..3 round robin over 37 examples
  CHECK(scoring.class_total(3) == 9);

  const auto labels = predict_labels(*model, data.inputs.data(), data.count, 5);
  REQUIRE(labels.size() == 37);
  std::size_t agree = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) agree += labels[i] == data.labels[i];
  CHECK(agree == correct);
}

TEST_CASE("pixels scale to [0, 1] as training data does") {
  IdxImages images;
  images.count = 1;
  images.rows = 1;
  images.cols = 3;
  images.pixels = {0, 51, 255};
  const auto inputs = scaled_pixels(images);
  REQUIRE(inputs.size() == 3);
  CHECK(inputs[0] == 0.0f);
  CHECK(inputs[1] == 51.0f / 255.0f);
  CHECK(inputs[2] == 1.0f);
}
