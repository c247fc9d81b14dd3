// Trains a model with embedding tables in this process, printing and recording as dense runs do.
#include "apps/sparse_run.hpp"

#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "actors/sparse_training.hpp"
#include "apps/checkpointing.hpp"
#include "apps/run_hooks.hpp"
#include "apps/error_exit.hpp"
#include "apps/local_run.hpp"
#include "apps/run_config.hpp"
#include "apps/resource_check.hpp"
#include "apps/run_outputs_check.hpp"
#include "apps/run_setup.hpp"
#include "apps/signal_watch.hpp"
#include "apps/sparse_data.hpp"
#include "apps/table_memory_check.hpp"
#include "apps/trace_output.hpp"
#include "apps/weights_file.hpp"
#include "io/checkpoint_file.hpp"
#include "io/model_file.hpp"
#include "io/user_text.hpp"
#include "model/embedding_table.hpp"
#include "model/run_features.hpp"
#include "model/sparse_model.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

namespace {

std::vector<FlagSetting> run_flags(const RunOptions& options) {
  auto flags = options.flags;
  if (!options.mode.empty()) flags.push_back({"--mode", "cluster.mode", SettingValue{options.mode}});
  if (options.workers != 0)
    flags.push_back({"--workers", "cluster.num_workers", SettingValue{std::int64_t{options.workers}}});
  return flags;
}

}  // namespace

Result<SparseRun> prepare_sparse_run(const TrainOptions& options, bool tables_here) {
  auto config = load_run_config(options.config_path, options.resume, options.overrides, run_flags(options));
  if (!config) return Error{config.error()};
  // A config note says what the config lost (a setting --set dropped): --quiet drops progress, not that.
  if (options.verbosity >= Verbosity::quiet)
    for (const auto& note : config->notes) fmt::print(stderr, "psgrad: note: {}\n", note);
  return prepare_sparse_run_with_config(options, std::move(config).value(), tables_here);
}

Result<SparseRun> prepare_sparse_run_with_config(const TrainOptions& options, Config config, bool tables_here) {
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
  // training.patience: the evaluations say when to stop (save_best is refused above).
  auto best = config.training.patience > 0
                  ? std::make_shared<BestWeights>(static_cast<std::uint64_t>(config.training.patience), false)
                  : nullptr;
  PreparedRun run{std::move(config), std::move(config_text), std::move(described), std::move(layout),
                  std::move(output).value(), std::move(trace), std::move(best)};
  auto row_optimizer = build_row_optimizer(table_optimizer_choice(run.config.tables), run.config.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  auto resume = load_resume(options.resume, run, resuming_model(*model, *data->train, (*row_optimizer)->name()));
  if (!resume) return Error{resume.error()};
  return SparseRun{std::move(run), std::move(data).value(), std::move(resume).value(), table_floats(*model)};
}

Status save_sparse_model(const std::string& path, const SparseRun& sparse, const SparseTrainingSummary& summary) {
  const auto& config = sparse.run.config;
  ModelFileContents file;
  file.header.weights_version = summary.run.final_weights.version;
  file.header.architecture = config.model.architecture;
  file.header.config_text = sparse.run.config_text;
  auto& tables = file.tables.emplace();
  tables.label = config.data.label;
  tables.max_tokens = config.data.max_tokens;
  tables.columns = config.data.columns;
  tables.class_names = sparse.data.class_names;
  const auto& weights = summary.run.final_weights.values;
  file.weights.assign(weights.data(), weights.data() + weights.size());
  for (std::size_t f = 0; f < summary.tables.size(); ++f)
    tables.tables.push_back(SavedTable{embedding_init_seed(config.training.seed, f), summary.tables[f]});
  return write_model_file(path, file);
}

int finish_sparse_run(const Result<SparseTrainingSummary>& outcome, const SparseRun& sparse,
                      const TrainOptions& options) {
  const auto& run = sparse.run;
  auto& output = *run.output;
  // Across processes the command that started the run (train --processes, serve) continues it.
  const auto command =
      options.resume_command.empty() ? resume_command(options, "psgrad train") : options.resume_command;
  int code = 0;
  if (run.trace) {
    if (auto written = write_trace_file(options.trace_path, *run.trace); written)
      output.print_note("psgrad: trace in " + options.trace_path);
    else {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(written.error()));
      code = 1;
    }
  }
  if (!outcome) {
    output.fail(outcome.error());
    fmt::print(stderr, "psgrad: training failed: {}\n", cut_long_words(outcome.error()));
    // The last checkpoint this run wrote continues it.
    if (const auto iteration = output.last_checkpoint_written(); iteration && !run.config.training.checkpoint_path.empty())
      fmt::print(stderr, "psgrad: the checkpoint of iteration {} is in {}; resume with: {} --resume {}\n", *iteration,
                 run.config.training.checkpoint_path, command, run.config.training.checkpoint_path);
    return 1;
  }
  const auto& summary = outcome->run;
  if (summary.interrupted_by != 0) {
    // The checkpoint writer put it there.
    const auto checkpoint = interrupted_checkpoint_path(run);
    output.interrupted(strsignal(summary.interrupted_by), summary.steps, checkpoint);
    fmt::print(stderr, "psgrad: interrupted; resume with: {} --resume {}\n", command, checkpoint);
  }
  output.print_line(summary_line(summary, run.job().cluster.num_workers));
  if (run.best)
    if (auto line = run.best->summary_line(summary); !line.empty()) output.print_line(line);
  output.print_line(fmt::format("final weights: version {}, hash {:016x}", summary.final_weights.version,
                                weights_hash(summary.final_weights.values)));
  output.finish(summary);
  if (output.interactive() && output.metrics()) output.print_note("psgrad: metrics in " + output.metrics()->path());
  if (output.tensorboard()) output.print_note("psgrad: TensorBoard events in " + output.tensorboard()->path());
  if (output.lost_output()) code = 1;
  if (!options.save_weights.empty()) {
    if (auto saved = write_weights_file(options.save_weights, summary.final_weights); !saved) {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(saved.error()));
      code = 1;
    }
  }
  if (!options.save_model.empty()) {
    if (auto saved = save_sparse_model(options.save_model, sparse, *outcome); saved)
      output.print_note("psgrad: model saved to " + options.save_model);
    else {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(saved.error()));
      code = 1;
    }
  }
  if (code == 0 && summary.interrupted_by != 0) return exit_code_for_signal(summary.interrupted_by);
  return code;
}


bool names_sparse_model(const RunOptions& options, const std::string& resume) {
  // Without --config, a sparse run's checkpoint names its run.
  if (options.config_path.empty()) return !resume.empty() && checkpoint_has_tables(resume);
  auto config = load_config(options.config_path, options.overrides, run_flags(options));
  return config && is_sparse_model(*config);
}

int run_sparse_train(const TrainOptions& options) {
  SignalWatch signals;  // before the actor system, whose threads must not take the signals
  auto prepared = prepare_sparse_run(options, true);
  if (!prepared) return ErrorExit{"psgrad"}.refused(prepared.error());
  auto& sparse = *prepared;
  auto& run = sparse.run;
  print_run_header(run);
  auto actor_config = local_actor_config(run);  // the system keeps a reference to it
  caf::actor_system system{actor_config};
  DriverHooks hooks;
  hooks.on_event = run.output->event_printer("psgrad train");
  hooks.interrupt = signals.flag();
  hooks.trace = run.trace;
  if (run.best) hooks.stop_early = run.best->stop_flag();
  SparseCheckpointing checkpointing;
  checkpointing.on_checkpoint = checkpoint_writer(run, signals.flag(), sparse.table_floats);
  checkpointing.checkpoints_on_signal_only = checkpoints_on_signal_only(run);
  checkpointing.config = run.config_text;
  checkpointing.resume = std::move(sparse.resume);
  signals.training_started();
  const auto outcome = train_sparse_in_process(system, run.job(), sparse.data.train, sparse.data.dev,
                                               run.output->callback(), table_optimizer_choice(run.config.tables),
                                               std::move(hooks), std::move(checkpointing), snapshot_callback(run));
  return finish_sparse_run(outcome, sparse, options);
}

}  // namespace psgrad
