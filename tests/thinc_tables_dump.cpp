// One training step's forward and backprop of a model config with a table front, on a given table,
// dense weights, ids and targets, for tests/thinc_tables_test.py to compare with real Thinc. Reads
// FOLDER/ids.npy, lengths.npy (one per example), table.npy (the HashEmbed's nV x nO rows), dense.npy (the
// other parameters, flat, in Thinc's model.walk() order) and targets.npy (one-hot); writes probs.npy (the
// prediction), dense_grads.npy and table_grad.npy (nV x nO: the rows' gradients, zero where untouched).
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/npy_array.hpp"
#include "tests/npy_dump.hpp"
#include "model/sparse_model.hpp"

using psgrad::testing::fail;
using psgrad::testing::floats;
using psgrad::testing::write_npy;

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: thinc_tables_dump CONFIG.cfg CLASSES FOLDER");
  const std::string text = psgrad::testing::file_text(argv[1]);
  auto config = psgrad::parse_config(text, argv[1]);
  if (!config) return fail(config.error());
  const std::string folder = argv[3];
  const auto classes = std::stoul(argv[2]);
  auto model = psgrad::SparseModel::build(config->model, classes);
  if (!model) return fail(model.error());
  auto ids_file = psgrad::read_npy_file(folder + "/ids.npy");
  auto lengths_file = psgrad::read_npy_file(folder + "/lengths.npy");
  auto table_file = psgrad::read_npy_file(folder + "/table.npy");
  auto dense_file = psgrad::read_npy_file(folder + "/dense.npy");
  auto targets_file = psgrad::read_npy_file(folder + "/targets.npy");
  if (!ids_file || !lengths_file || !table_file || !dense_file || !targets_file) return fail("cannot read the arrays");
  std::vector<std::uint64_t> ids(ids_file->element_count());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint64_t>(ids_file->value(i));
  std::vector<std::size_t> lengths(lengths_file->element_count());
  for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<std::size_t>(lengths_file->value(i));
  auto ragged = psgrad::RaggedIds::from_lengths(ids, lengths);
  if (!ragged) return fail(ragged.error());
  const auto dense = floats(*dense_file);
  if (dense.size() != model->dense().parameter_count())
    return fail("Thinc's dense parameters hold " + std::to_string(dense.size()) + " floats, psgrad's layout " +
                std::to_string(model->dense().parameter_count()) + ":\n" + model->dense().layout().describe());
  model->dense().set_weights(dense.data(), dense.size());
  const auto table = floats(*table_file);
  const std::size_t width = model->fields().front().width;
  auto lookup = model->look_up({*ragged});
  if (!lookup) return fail(lookup.error());
  psgrad::SparseRows rows(lookup->fields.front().keys, width);
  for (std::size_t k = 0; k < rows.size(); ++k)
    std::copy_n(table.data() + rows.keys[k] * width, width, rows.row(k));
  const auto targets = floats(*targets_file);
  const auto examples = static_cast<Eigen::Index>(lengths.size());
  const auto probabilities = model->predict(*lookup, {rows});
  if (!write_npy(folder + "/probs.npy", {lengths.size(), classes}, probabilities.data(), probabilities.size()))
    return fail("cannot write probs.npy");
  psgrad::Random rng(0);
  std::vector<psgrad::SparseRows> row_gradients;
  model->compute_gradients(*lookup, {rows}, psgrad::ConstMatrixMap(targets.data(), examples, static_cast<Eigen::Index>(classes)),
                           rng, row_gradients);
  std::vector<float> table_gradient(table.size(), 0.0f);
  const auto& gradient = row_gradients.front();
  for (std::size_t k = 0; k < gradient.size(); ++k)
    std::copy_n(gradient.row(k), width, table_gradient.data() + gradient.keys[k] * width);
  const auto& dense_gradient = model->dense().gradients();
  if (!write_npy(folder + "/dense_grads.npy", {dense_gradient.size()}, dense_gradient.data(), dense_gradient.size()) ||
      !write_npy(folder + "/table_grad.npy", {table.size() / width, width}, table_gradient.data(), table_gradient.size()))
    return fail("cannot write the gradients");
  std::printf("%s", model->dense().layout().describe().c_str());
  return 0;
}
