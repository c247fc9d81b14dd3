// A run of a model with embedding tables: its set-up, its model file, its training in this process.
#include "apps/tables_run.hpp"

#include <memory>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "apps/checkpointing.hpp"
#include "apps/run_hooks.hpp"
#include "apps/run_config.hpp"
#include "apps/resource_check.hpp"
#include "apps/run_outputs_check.hpp"
#include "apps/run_setup.hpp"
#include "apps/sparse_data.hpp"
#include "apps/table_memory_check.hpp"
#include "io/checkpoint_file.hpp"
#include "io/model_file.hpp"
#include "model/embedding_table.hpp"
#include "model/run_features.hpp"
#include "model/sparse_model.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

bool names_model_with_tables(const RunOptions& options, const std::string& resume) {
  // Without --config, a checkpoint with tables names its run.
  if (options.config_path.empty()) return !resume.empty() && checkpoint_has_tables(resume);
  auto config = load_config(options.config_path, options.overrides, run_flags(options));
  return config && is_sparse_model(*config);
}

Result<PreparedRun> prepare_tables_run(const RunOptions& options, Config config) {
  const bool tables_here = process_role(options) != ProcessRole::server;
  // Refused before any data is read.
  if (auto offered = check_run_features(config, true); !offered)
    return Error{fmt::format("{}: {}", config.source, offered.error())};
  if (auto fits = check_model_fits_data(config); !fits) return Error{fits.error()};
  if (auto threads = check_threads_start(config); !threads) return Error{threads.error()};
  if (auto writable = check_run_outputs(options, config); !writable) return Error{writable.error()};
  if (tables_here)
    if (auto fits = check_tables_fit_machine(config, config.cluster.servers); !fits) return Error{fits.error()};
  auto data = load_sparse_split(config);
  if (!data) return Error{data.error()};
  auto declared = SparseModel::build(config.model, data->class_names.size());
  if (!declared) return Error{fmt::format("{}: model: {}", config.source, declared.error())};
  if (declared->fields().size() != data->train->id_fields.size())
    return Error{fmt::format("{}: model.embedding_widths has {} entries, but [data.columns] declares {} id or text "
                             "columns; give one width and one row count per column",
                             config.source, declared->fields().size(), data->train->id_fields.size())};
  // The model the run trains reads the data's number columns too, after the embeddings.
  auto model = SparseModel::build_for_data(config.model, *data->train,
                                           "training data");
  if (!model) return Error{fmt::format("{}: model: {}", config.source, model.error())};
  auto config_text = render_config(config);
  auto output = open_run_output(options, config_text, config, data->description);
  if (!output) return Error{output.error()};
  auto trace = options.trace_path.empty() ? nullptr : std::make_shared<TraceRecorder>();
  DataSplit described;
  described.description = data->description;
  auto layout = model->dense().layout();
  // training.patience and save_best: the evaluations say when to stop and which dense weights to keep (the
  // table shards keep that evaluation's rows).
  std::shared_ptr<BestWeights> best;
  if (config.training.patience > 0 || config.training.save_best)
    best = std::make_shared<BestWeights>(static_cast<std::uint64_t>(config.training.patience),
                                         config.training.save_best);
  auto row_optimizer = build_row_optimizer(table_optimizer_choice(config.tables), config.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  TablesRun tables{std::move(data).value(), nullptr, (*row_optimizer)->name(), table_floats(*model)};
  tables.model = std::make_shared<const SparseModel>(std::move(model).value());
  PreparedRun run{std::move(config),         std::move(config_text), std::move(described), std::move(layout),
                  std::move(output).value(), std::move(trace),       std::move(best),      std::move(tables)};
  return run;
}

ResumingModel resuming_model_of(const PreparedRun& run) {
  return resuming_model(*run.tables->model, *run.tables->data.train, run.tables->row_optimizer);
}

Status save_tables_model(const std::string& path, const PreparedRun& run, const TrainedRun& trained,
                         const Weights& dense) {
  const auto& config = run.config;
  ModelFileContents file;
  file.header.weights_version = dense.version;
  file.header.architecture = config.model.architecture;
  file.header.config_text = run.config_text;
  auto& tables = file.tables.emplace();
  tables.label = config.data.label;
  tables.max_tokens = config.data.max_tokens;
  tables.columns = config.data.columns;
  tables.class_names = run.tables->data.class_names;
  const auto& weights = dense.values;
  file.weights.assign(weights.data(), weights.data() + weights.size());
  for (std::size_t f = 0; f < trained.tables.size(); ++f)
    tables.tables.push_back(SavedTable{embedding_init_seed(config.training.seed, f), trained.tables[f]});
  return write_model_file(path, file);
}

}  // namespace psgrad
