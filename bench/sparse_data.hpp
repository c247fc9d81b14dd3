// Section 9's data: click logs made up in memory (io/click_log_generator.hpp) as a SparseDataset, the
// dev split psgrad takes with data.dev_fraction (the last share of each class), and the hashed keys of a
// data set written for the PyTorch peers, so that they train on exactly the rows psgrad's tables use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "actors/training_job.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"

namespace psgrad::bench {

// `rows` click-log rows drawn with row_seed from one fixed hidden model: the 26 categorical fields as
// id fields C1 ... C26 of one id each, the click as class 1 of "0" and "1" (the counts are left out:
// hashembed_mlp.v1 reads id fields only).
std::shared_ptr<const SparseDataset> click_dataset(std::size_t rows, std::uint64_t row_seed);

// The rows click_dataset(rows, row_seed) holds, as the JSON Lines file `psgrad data click-logs` writes
// (the counts I1 ... I13 too, which a config's [data.columns] leaves out); throws when it cannot be written.
void write_click_file(const std::string& path, std::size_t rows, std::uint64_t row_seed);

// The first (1 - fraction) of each class in file order for training, the rest for dev, as psgrad splits
// a file by data.dev_fraction.
std::pair<std::shared_ptr<const SparseDataset>, std::shared_ptr<const SparseDataset>> split_last_of_each_class(
    const SparseDataset& all, double fraction);

// The most frequent class of `train` and its share of `dev`: what always guessing it scores.
double majority_accuracy(const SparseDataset& train, const SparseDataset& dev);

// Writes, under folder/<name>., per field the keys its HashEmbed gives every id (four per id, in Thinc's
// order, as int64) and each example's offset into them (int64, examples + 1), and the labels (int64);
// returns the description the peers read (keys.json holds it for a train and a dev part).
nlohmann::json write_peer_keys(const std::string& folder, const std::string& name, const SparseModel& model,
                               const SparseDataset& data);


// The first `count` examples of `all` (all of them when count is 0 or larger).
std::shared_ptr<const SparseDataset> first_examples(std::shared_ptr<const SparseDataset> all, std::size_t count);

// What a PyTorch peer builds from a hashembed_mlp.v1 job: per field its rows and width, the pooling,
// hidden width, dropout, classes, batch size and Adam's learning rate.
nlohmann::json peer_model(const TrainingJob& job, const SparseModel& model);

// A folder of its own under the temporary folder, removed with everything in it when this goes.
class ScratchFolder {
 public:
  ScratchFolder();
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace psgrad::bench
