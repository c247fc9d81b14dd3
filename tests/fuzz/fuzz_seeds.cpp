// Writes the fuzzers' seed corpus with psgrad's own writers, so the seeds follow any format change.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <lz4frame.h>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "payloads/messages.hpp"
#include "io/checkpoint_file.hpp"
#include "io/idx.hpp"
#include "io/npz_archive.hpp"

namespace {

using psgrad::FloatBuffer;

bool check(const psgrad::Status& status) {
  if (!status) std::fprintf(stderr, "fuzz_seeds: %s\n", status.error().c_str());
  return status.ok();
}

template <class Payload>
bool write_payload(caf::actor_system& system, const std::filesystem::path& path, Payload payload) {
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  if (auto err = sink(payload)) return false;
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

// One lz4 frame of `text`, as apt writes its lists.
std::string lz4_frame(const std::string& text) {
  std::string frame(LZ4F_compressFrameBound(text.size(), nullptr), '\0');
  const auto size = LZ4F_compressFrame(frame.data(), frame.size(), text.data(), text.size(), nullptr);
  frame.resize(LZ4F_isError(size) ? 0 : size);
  return frame;
}

}  // namespace

// Usage: fuzz_seeds <dir>; fills <dir>/idx, <dir>/payload, <dir>/checkpoint, <dir>/own-data and
// <dir>/sparse-data.
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds <dir>\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  for (const char* sub : {"idx", "payload", "checkpoint", "own-data", "sparse-data"})
    std::filesystem::create_directories(root / sub);

  // Small shapes keep the seeds, and so each execution, small: 3 images of 4x5.
  psgrad::IdxImages images{3, 4, 5, std::vector<std::uint8_t>(60)};
  for (std::size_t i = 0; i < images.pixels.size(); ++i) images.pixels[i] = static_cast<std::uint8_t>(i * 17);
  psgrad::IdxLabels labels{{7, 0, 9}};
  bool ok = check(psgrad::write_idx_images((root / "idx/images.idx").string(), images)) &&
            check(psgrad::write_idx_labels((root / "idx/labels.idx").string(), labels)) &&
            check(psgrad::write_idx_labels((root / "idx/labels.idx.gz").string(), labels));

  const std::vector<float> values = {0.5f, -1.25f, 3.0f, 0.0f, 1e-3f, -7.5f};
  psgrad::ActorConfig config(1);
  caf::actor_system system{config};
  ok = ok && write_payload(system, root / "payload/weights.bin",
                           psgrad::Weights{3, 0xabcdef, FloatBuffer::copy_of(values.data(), values.size())});
  ok = ok && write_payload(system, root / "payload/gradients.bin",
                           psgrad::Gradients{3, 0xabcdef, 1, 32, 2.25f,
                                             FloatBuffer::copy_of(values.data(), values.size())});
  // The other wire encodings: bf16 values (rounded as they are written) and index-value pairs.
  const auto shared = std::make_shared<const psgrad::AlignedFloats>(values.begin(), values.end());
  ok = ok && write_payload(system, root / "payload/gradients-bf16.bin",
                           psgrad::Gradients{3, 0xabcdef, 1, 32, 2.25f, FloatBuffer(shared, psgrad::WireEncoding::bf16)});
  ok = ok && write_payload(system, root / "payload/gradients-topk.bin",
                           psgrad::Gradients{3, 0xabcdef, 1, 32, 2.25f, FloatBuffer(shared, psgrad::WireEncoding::topk)});
  // A shard's part: a slice of the gradient, with the sums of squares of chunks other shards hold.
  psgrad::Gradients part{3, 0xabcdef, 1, 32, 2.25f, FloatBuffer(shared).slice(2, 5)};
  part.foreign_squares = {0.75, 12.5};
  ok = ok && write_payload(system, root / "payload/gradients-shard.bin", part);
  // Weights that name a slot of this (seed-writing) process's shared memory: the decoder must refuse
  // the reference, whatever count a mutation gives it, before allocating anything.
  ok = ok && write_payload(system, root / "payload/weights-shared-memory.bin",
                           psgrad::Weights{3, 0xabcdef, FloatBuffer(shared).through_shared_memory()});
  // What a sync shard tells another of its step's sum.
  ok = ok && write_payload(system, root / "payload/shard-squares.bin",
                           psgrad::ShardSquares{4, 1, {0.5, std::numeric_limits<double>::infinity()}, {0, 2, 3}});

  psgrad::TrainingCheckpoint checkpoint;
  checkpoint.config = "[model]\nhidden = [4]\n";
  checkpoint.iteration = 5;
  checkpoint.version = 5;
  checkpoint.layout_hash = 0xabcdef;
  checkpoint.weights = values;
  checkpoint.optimizer.buffers = values;
  checkpoint.optimizer.counts = {5};
  checkpoint.workers.resize(2);
  checkpoint.workers[1].worker = 1;
  checkpoint.workers[1].data.cursor = 3;
  ok = ok && check(psgrad::write_checkpoint((root / "checkpoint/resume.ckpt").string(), checkpoint));
  // The same with a tables part of two shards, one row each.
  auto& tables = checkpoint.tables.emplace();
  tables.row_optimizer = "LazyAdam";
  for (std::uint32_t shard = 0; shard < 2; ++shard) {
    psgrad::TableState table;
    table.width = 2;
    table.state_width = 4;
    table.keys = {shard};
    table.rows = {0.5f, -0.5f};
    table.state = {0, 0, 0, 0};
    table.steps = {5};
    tables.shards.push_back(psgrad::ShardTablesState{shard, 2, 5, {table}});
  }
  ok = ok && check(psgrad::write_checkpoint((root / "checkpoint/tables.ckpt").string(), checkpoint));

  const auto x = psgrad::npy_array({3, 2}, values);
  const auto y = psgrad::npy_array({3}, std::vector<std::uint8_t>{1, 0, 2});
  std::ofstream(root / "own-data/x.npy", std::ios::binary) << psgrad::npy_bytes(x);
  std::ofstream(root / "own-data/examples.csv", std::ios::binary) << "label,a,b\n1,0.5,2\n0,\"3\",-1e3\r\n";
  ok = ok && check(psgrad::write_npz((root / "own-data/stored.npz").string(), {{"x_train", x}, {"y_train", y}}, false));
  ok = ok && check(psgrad::write_npz((root / "own-data/deflated.npz").string(), {{"x_train", x}, {"y_train", y}}, true));

  // The columns fuzz_sparse_data declares: price (number), tags (ids), title (text), user (ids to 1000).
  std::ofstream(root / "sparse-data/examples.jsonl", std::ios::binary)
      << "{\"title\": \"red apple\", \"tags\": [3, \"fruit\"], \"user\": 7, \"price\": 1.5, \"label\": \"food\"}\n"
         "{\"title\": null, \"tags\": \"x\", \"user\": [], \"price\": -2, \"label\": \"drink\", \"more\": {\"a\": [1]}}\n";
  std::ofstream(root / "sparse-data/examples.csv", std::ios::binary)
      << "label,title,tags,user,price\nfood,\"red apple\",3 fruit,7,+1.5\r\n2,,,1000,-2\n";
  std::ofstream(root / "sparse-data/examples.tsv", std::ios::binary)
      << "label\ttitle\ttags\tuser\tprice\nfood\tred apple\t3 fruit\t7\t1.5\n";
  const std::string packages =
      "Package: 0ad\nDepends: 0ad-data (>= 0.0.26), fonts-dejavu-core | ttf-dejavu-core,\n python3:any\n"
      "Description: Real-time strategy game\n longer text\nSection: contrib/games\n\nPackage: libstdc++6\n"
      "Maintainer: GCC <gcc@example.org>\nSection: libs\n";
  std::ofstream(root / "sparse-data/Packages", std::ios::binary) << packages;
  std::ofstream(root / "sparse-data/Packages.lz4", std::ios::binary) << lz4_frame(packages);
  // Found by this fuzzer: a section with no name after its area once made a class named "".
  std::ofstream(root / "sparse-data/empty-section-Packages", std::ios::binary)
      << "Package: 0ad\nSection: contrib/games/\n\nPackage: b\nSection: /\n";
  return ok ? 0 : 1;
}
