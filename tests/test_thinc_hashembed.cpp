// psgrad's HashEmbed and pooling against Thinc's own, run by /usr/bin/python3 on the same ids, seed,
// table and gradients (tests/thinc_hashembed.py): the same keys exactly, outputs and gradients to 1e-6.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/hashembed.hpp"
#include "model/murmurhash3.hpp"
#include "model/string_hash.hpp"
#include "model/pooling.hpp"
#include "tests/ci_skip.hpp"
#include "tests/gradient_check.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool thinc_importable() { return std::system("/usr/bin/python3 -c 'import thinc' >/dev/null 2>&1") == 0; }

void check_close(const std::vector<float>& ours, const std::vector<double>& theirs) {
  REQUIRE(ours.size() == theirs.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < ours.size(); ++i)
    if (std::abs(ours[i] - theirs[i]) > 1e-6 && ++mismatches <= 5)
      MESSAGE("index " << i << ": psgrad " << ours[i] << ", thinc " << theirs[i]);
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("HashEmbed with reduce_sum and reduce_mean gives Thinc's keys, outputs and table gradients") {
  const char* missing = "/usr/bin/python3 cannot import thinc (scripts/setup.sh --test installs python3-thinc)";
  if (!thinc_importable() && psgrad::testing::cannot_run_here(missing)) return;
  const HashEmbedSpec spec{6, 97, 12345, 0};
  // Token hashes, small ids, the largest id and repeats; one empty bag.
  RaggedIds field;
  field.add_example({string_hash("the"), string_hash("cat"), string_hash("the")});
  field.add_example({});
  field.add_example({0, 1, ~0ull});
  field.add_example({42});
  const auto table = psgrad::testing::random_values(spec.rows * spec.width, 7, 0.1f);
  const auto d_pooled = psgrad::testing::random_values(field.examples() * spec.width, 8, 1.0f);

  nlohmann::json input;
  input["width"] = spec.width;
  input["rows"] = spec.rows;
  input["seed"] = spec.seed;
  input["ids"] = field.ids();
  std::vector<std::size_t> lengths;
  for (std::size_t e = 0; e < field.examples(); ++e) lengths.push_back(field.length(e));
  input["lengths"] = lengths;
  input["table"] = table;
  input["d_pooled"] = d_pooled;
  const psgrad::testing::TempFolder folder("thinc-hashembed");
  std::ofstream(folder.file("input.json")) << input.dump();
  const std::string command = "/usr/bin/python3 " + std::string(PSGRAD_SOURCE_DIR) + "/tests/thinc_hashembed.py <" +
                              folder.file("input.json") + " >" + folder.file("output.json");
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "the Thinc script failed: ", command);
  const auto thinc = nlohmann::json::parse(psgrad::testing::read_file_bytes(folder.file("output.json")));

  const FieldLookup lookup = look_up(spec, field);
  std::vector<std::uint64_t> keys;
  for (auto position : lookup.positions) keys.push_back(lookup.keys[position]);
  CHECK(keys == thinc["keys"].get<std::vector<std::uint64_t>>());

  SparseRows rows(lookup.keys, spec.width);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(table.data() + lookup.keys[i] * spec.width, spec.width, rows.row(i));
  std::vector<float> vectors(lookup.id_count() * spec.width);
  embed_ids(spec, lookup, rows, vectors.data());
  check_close(vectors, thinc["vectors"].get<std::vector<double>>());

  for (const auto pooling : {Pooling::sum, Pooling::mean}) {
    const std::string name = pooling_name(pooling);
    CAPTURE(name);
    std::vector<float> pooled(field.examples() * spec.width);
    pool(pooling, vectors.data(), lookup.offsets, spec.width, pooled.data(), spec.width);
    check_close(pooled, thinc[name].get<std::vector<double>>());
    std::vector<float> d_vectors(vectors.size());
    pool_backward(pooling, d_pooled.data(), spec.width, lookup.offsets, spec.width, d_vectors.data());
    const SparseRows gradient = embedding_gradient(spec, lookup, d_vectors.data());
    // Thinc's gradient is the whole table's: psgrad's rows where it has them, zero everywhere else.
    std::vector<float> dense(spec.rows * spec.width, 0.0f);
    for (std::size_t i = 0; i < gradient.size(); ++i)
      std::copy_n(gradient.row(i), spec.width, dense.data() + gradient.keys[i] * spec.width);
    check_close(dense, thinc[name + "_gradient"].get<std::vector<double>>());
  }
}
