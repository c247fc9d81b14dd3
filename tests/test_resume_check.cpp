// One resume check for every model: a checkpoint of a model with tables does not continue a model
// without, nor the other way, and each misfit is one line naming what differs.
#include <doctest/doctest.h>

#include <string>

#include "actors/resume_check.hpp"
#include "model/parameter_layout.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TrainingJob small_job() {
  TrainingJob job;
  job.training.iterations = 10;
  job.cluster.num_workers = 1;
  return job;
}

}  // namespace

TEST_CASE("a checkpoint resumes only a model of its own kind, tables or none, said in one line") {
  ParameterLayout layout;
  const auto job = small_job();
  TrainingCheckpoint dense;
  dense.layout_hash = layout.hash();
  ResumingModel without_tables;
  without_tables.layout = &layout;
  without_tables.train_examples = 100;
  ResumingModel with_tables = without_tables;
  with_tables.tables = ResumedTables{"LazyAdam", {4}};

  auto tables = dense;
  tables.tables.emplace();
  tables.tables->row_optimizer = "LazyAdam";
  const auto refused_tables = check_resume(tables, job, without_tables);
  REQUIRE_FALSE(refused_tables.ok());
  CHECK(contains(refused_tables.error(), "checkpoint holds embedding tables, and the config's model has none"));
  CHECK(refused_tables.error().find('\n') == std::string::npos);

  const auto refused_dense = check_resume(dense, job, with_tables);
  REQUIRE_FALSE(refused_dense.ok());
  CHECK(contains(refused_dense.error(), "checkpoint holds no embedding tables, and the config's model has them"));

  // A tables part whose shards do not make whole tables is named before the dense fields are read.
  const auto no_shards = check_resume(tables, job, with_tables);
  REQUIRE_FALSE(no_shards.ok());
  CHECK(contains(no_shards.error(), "checkpoint does not fit this run: no table shards"));
}
