// A training set's fingerprint tells the same data from another set, a subset or a relabelling.
#include <doctest/doctest.h>

#include "model/data_fingerprint.hpp"

using namespace psgrad;

namespace {

Dataset small_set(std::size_t count) {
  Dataset data;
  data.count = count;
  data.width = 5;
  data.num_classes = 3;
  for (std::size_t k = 0; k < count * data.width; ++k) data.inputs.push_back(static_cast<float>(k % 7) / 255.0f);
  for (std::size_t k = 0; k < count; ++k) data.labels.push_back(static_cast<std::uint8_t>(k % 3));
  return data;
}

}  // namespace

TEST_CASE("the same data under another name has no difference, and changed data says what changed") {
  const auto data = small_set(9);
  const auto server = fingerprint_of(data, "digits");
  CHECK_FALSE(data_difference(fingerprint_of(small_set(9), "copy"), server).has_value());

  auto relabelled = small_set(9);
  relabelled.labels[4] = 0;
  CHECK(data_difference(fingerprint_of(relabelled, "digits"), server)->find("the same inputs with other labels") !=
        std::string::npos);

  auto repainted = small_set(9);
  repainted.inputs[44] = 1.0f;  // the last value: the hash's tail is covered too
  CHECK(data_difference(fingerprint_of(repainted, "digits"), server)->find("(other inputs)") != std::string::npos);

  const auto subset = fingerprint_of(small_set(8), "digits");
  CHECK(data_difference(subset, server)->find("another number of examples") != std::string::npos);
  CHECK(data_difference(subset, server)->find("worker digits (8 examples") != std::string::npos);
}

TEST_CASE("a difference names the sides it was asked about") {
  const auto checkpoint = fingerprint_of(small_set(9), "digits");
  auto relabelled = small_set(9);
  relabelled.labels[0] = 2;
  const auto differs = data_difference(fingerprint_of(relabelled, "relabelled"), checkpoint, "this run", "checkpoint");
  REQUIRE(differs.has_value());
  CHECK(differs->rfind("training data differs from the checkpoint's (the same inputs with other labels): this run "
                       "relabelled (9 examples, ",
                       0) == 0);
  CHECK(differs->find(", checkpoint digits (9 examples, ") != std::string::npos);
}
