// Loads the config, data and layout a run needs, opens its output, and reports how it ended.
#include "apps/run_setup.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <unistd.h>

#include "apps/checkpointing.hpp"
#include "apps/invoked_program.hpp"
#include "apps/signal_watch.hpp"
#include "apps/trace_output.hpp"
#include "apps/metrics_from_run.hpp"
#include "apps/model_saving.hpp"
#include "apps/resource_check.hpp"
#include "apps/run_config.hpp"
#include "apps/run_outputs_check.hpp"
#include "apps/run_plan_check.hpp"
#include "apps/sparse_data.hpp"
#include "apps/tables_run.hpp"
#include "apps/weights_file.hpp"
#include "io/data_source.hpp"
#include "io/user_text.hpp"
#include "launch/shell_quote.hpp"

namespace psgrad {

namespace {

constexpr const char* kDefaultMetricsFolder = "runs";

// What both ways into a run build once the config and data are there.
Result<PreparedRun> build_prepared_run(const RunOptions& options, Config config, DataSplit data) {
  if (auto plan = check_run_plan(config, data.train->width, data.train->num_classes); !plan)
    return Error{plan.error()};
  auto model = build_model(config, data.train->width, data.train->num_classes);
  if (!model) return Error{model.error()};
  auto config_text = render_config(config);
  auto output = open_run_output(options, config_text, config, data.description);
  if (!output) return Error{output.error()};
  auto trace = options.trace_path.empty() ? nullptr : std::make_shared<TraceRecorder>();
  std::shared_ptr<BestWeights> best;
  if (config.training.patience > 0 || config.training.save_best)
    best = std::make_shared<BestWeights>(static_cast<std::uint64_t>(config.training.patience),
                                         config.training.save_best);
  auto layout = model->layout();
  return PreparedRun{std::move(config),     std::move(config_text), std::move(data),
                     std::move(layout),     std::move(output).value(), std::move(trace),
                     std::move(best)};
}

}  // namespace

Result<std::shared_ptr<RunOutput>> open_run_output(const RunOptions& options, const std::string& config_text,
                                                   const TrainingJob& job, const std::string& data_description) {
  const auto start = std::chrono::system_clock::now();
  // The event file first: a folder that cannot be made then leaves no metrics file of a run that never was.
  std::unique_ptr<TensorBoardOutput> events;
  if (!options.tensorboard_dir.empty()) {
    auto created = TensorBoardOutput::create_in(options.tensorboard_dir);
    if (!created) return Error{created.error()};
    events = std::move(created).value();
  }
  std::unique_ptr<MetricsWriter> metrics;
  if (!options.metrics_path || !options.metrics_path->empty()) {
    auto writer = options.metrics_path ? MetricsWriter::create(*options.metrics_path)
                                       : MetricsWriter::create_in(kDefaultMetricsFolder, mode_name(job.cluster.mode), start);
    if (!writer) return Error{writer.error()};
    metrics = std::move(writer).value();
    if (auto written = metrics->write(metrics_run(options.command, config_text, job, data_description, start)); !written)
      return Error{written.error()};
  }
  OutputSettings settings;
  settings.verbosity = options.verbosity;
  settings.progress_line = output_is_terminal();
  std::string interrupted_checkpoint;
  if (metrics) {
    interrupted_checkpoint = metrics->path();
    const auto dot = interrupted_checkpoint.rfind(".jsonl");
    if (dot != std::string::npos) interrupted_checkpoint.erase(dot);
    interrupted_checkpoint += "-interrupted.ckpt";
  } else {
    // The process id keeps runs started in the same second apart, as the metrics file's free name does.
    interrupted_checkpoint = fmt::format("{}/{}-{}-{}-interrupted.ckpt", kDefaultMetricsFolder, compact_utc(start),
                                         mode_name(job.cluster.mode), ::getpid());
  }
  auto output = std::make_shared<RunOutput>(settings, job.cluster.mode != TrainingMode::sync, std::move(metrics));
  output->name_interrupted_checkpoint(std::move(interrupted_checkpoint));
  if (events) output->add_tensorboard(std::move(events));
  return output;
}

std::string summary_line(const TrainingSummary& summary, std::size_t workers) {
  auto line = fmt::format("{} summary: workers {}, steps {}, final accuracy {:.3f}, wall {:.2f} s, "
                          "{:.0f} samples/s",
                          mode_name(summary.mode), workers, summary.steps, summary.final_accuracy,
                          summary.wall_seconds,
                          summary.training_seconds > 0 ? summary.samples / summary.training_seconds : 0.0);
  const auto dropped = std::accumulate(summary.workers.dropped.begin(), summary.workers.dropped.end(),
                                       std::uint64_t{0});
  if (dropped > 0) line += fmt::format(", {} late gradients dropped", dropped);
  // Sync has staleness only with the pipeline.
  if (summary.mode != TrainingMode::sync || summary.staleness_max > 0)
    line += fmt::format(", staleness min/mean/max {:.0f}/{:.2f}/{:.0f}", summary.staleness_min,
                        summary.staleness_mean, summary.staleness_max);
  // Every worker that took part (elastic joiners too) either finished or was lost.
  const auto took_part = std::max(summary.gradients_per_worker.size(), workers);
  const auto lost = summary.lost.size();
  line += fmt::format(", {} of {} workers finished, {} lost", took_part - std::min(lost, took_part), took_part, lost);
  std::vector<std::string> losses;
  for (const auto& loss : summary.lost)
    losses.push_back(fmt::format("{} at step {}, {:.1f} s", loss.name, loss.step, loss.wall_seconds));
  if (!losses.empty()) line += fmt::format(" ({})", fmt::join(losses, "; "));
  return line;
}

std::vector<FlagSetting> run_flags(const RunOptions& options) {
  auto flags = options.flags;
  if (!options.mode.empty()) flags.push_back({"--mode", "cluster.mode", SettingValue{options.mode}});
  if (options.workers != 0)
    flags.push_back({"--workers", "cluster.num_workers", SettingValue{std::int64_t{options.workers}}});
  return flags;
}

Result<PreparedRun> prepare_run(const RunOptions& options, const std::string& resume_path) {
  auto config = load_run_config(options.config_path, resume_path, options.overrides, run_flags(options));
  if (!config) return Error{config.error()};
  // A config note says what the config lost (a setting --set dropped): --quiet drops progress, not that.
  if (options.verbosity >= Verbosity::quiet)
    for (const auto& note : config->notes) fmt::print(stderr, "psgrad: note: {}\n", note);
  if (is_sparse_model(*config)) return prepare_tables_run(options, std::move(config).value());
  if (auto fits = check_model_fits_data(*config); !fits) return Error{fits.error()};
  if (auto writable = check_run_outputs(options, *config); !writable) return Error{writable.error()};
  const auto data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  if (auto threads = check_threads_start(*config); !threads) return Error{threads.error()};
  if (auto fits = check_fits_machine(*config, data_dir, process_role(options)); !fits) return Error{fits.error()};
  auto data = load_data_shared(data_source(config->data), data_dir);
  if (!data) return Error{data.error()};
  return build_prepared_run(options, std::move(config).value(), std::move(data).value());
}

Result<PreparedRun> prepare_run_with_data(const RunOptions& options, Config config, DataSplit data) {
  if (auto writable = check_run_outputs(options, config); !writable) return Error{writable.error()};
  DataShape shape;
  shape.width = data.train->width;
  shape.classes = data.train->num_classes;
  shape.train_count = data.train->count;
  shape.dev_count = data.dev ? data.dev->count : 0;
  if (auto threads = check_threads_start(config); !threads) return Error{threads.error()};
  if (auto fits = check_fits_machine(config, shape, process_role(options)); !fits) return Error{fits.error()};
  return build_prepared_run(options, std::move(config), std::move(data));
}

std::string resume_command(const RunOptions& options, const std::string& command) {
  const auto entry = invoked_program() + " " + command;
  return options.data_dir.empty() ? entry : entry + " --data-dir " + shell_quoted(options.data_dir);
}

void print_run_header(const PreparedRun& run) {
  run.output->print_line(fmt::format("Running {} parameter server training: {} workers, {} iterations, data {}",
                                     run.job().cluster.mode == TrainingMode::sync    ? "synchronous"
                                     : run.job().cluster.mode == TrainingMode::async ? "asynchronous"
                                                                           : "stale synchronous parallel",
                                     run.job().cluster.num_workers, run.job().training.iterations, run.data.description));
}

Weights kept_weights(const TrainingSummary& summary, const PreparedRun& run) {
  if (run.best)
    if (auto best = run.best->kept_weights()) return *best;
  return summary.final_weights;
}

int finish_run(const Result<TrainingSummary>& summary, const PreparedRun& run, const RunOptions& options,
               const ModelSaver& save) {
  auto& output = *run.output;
  // Across processes the command that started the run (train --processes, serve, launch) continues it.
  const auto command =
      options.resume_command.empty() ? resume_command(options, options.command) : options.resume_command;
  // Written for a failed run too: the timeline up to the failure is what explains it.
  bool trace_failed = false;
  if (run.trace) {
    if (auto written = write_trace_file(options.trace_path, *run.trace); written)
      output.print_note("psgrad: trace in " + options.trace_path);
    else {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(written.error()));
      trace_failed = true;
    }
  }
  if (!summary) {
    output.fail(summary.error());
    fmt::print(stderr, "psgrad: training failed: {}\n", cut_long_words(summary.error()));
    // A lost shard or every worker lost: the last checkpoint this run wrote continues it.
    if (const auto iteration = output.last_checkpoint_written(); iteration && !run.config.training.checkpoint_path.empty())
      fmt::print(stderr, "psgrad: the checkpoint of iteration {} is in {}; resume with: {} --resume {}\n", *iteration,
                 run.config.training.checkpoint_path, command, run.config.training.checkpoint_path);
    return 1;
  }
  if (summary->interrupted_by != 0) {
    // The checkpoint writer put it there.
    const auto checkpoint = interrupted_checkpoint_path(run);
    output.interrupted(strsignal(summary->interrupted_by), summary->steps, checkpoint);
    if (!checkpoint.empty())
      fmt::print(stderr, "psgrad: interrupted; resume with: {} --resume {}\n", command, checkpoint);
  }
  output.print_line(summary_line(*summary, run.job().cluster.num_workers));
  output.print_line(fmt::format("final weights: version {}, hash {:016x}", summary->final_weights.version,
                                weights_hash(summary->final_weights.values)));
  // With training.save_best, --save and --save-weights write the best evaluated weights.
  const auto kept = kept_weights(*summary, run);
  if (run.best) {
    if (auto line = run.best->summary_line(*summary); !line.empty()) output.print_line(line);
    if (run.best->kept_weights())
      output.print_line(fmt::format("kept weights: version {}, hash {:016x}", kept.version, weights_hash(kept.values)));
  }
  output.finish(*summary);
  if (output.interactive() && output.metrics()) output.print_note("psgrad: metrics in " + output.metrics()->path());
  if (output.tensorboard()) output.print_note("psgrad: TensorBoard events in " + output.tensorboard()->path());
  int code = output.lost_output() || trace_failed ? 1 : 0;  // the failed write was reported when it happened
  if (!options.save_weights.empty()) {
    auto saved = write_weights_file(options.save_weights, kept);
    if (!saved) {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(saved.error()));
      code = 1;
    }
  }
  if (!options.save_model.empty()) {
    auto saved = save ? save(options.save_model, kept) : save_model(options.save_model, run, kept);
    if (saved) output.print_note("psgrad: model saved to " + options.save_model);
    else {
      fmt::print(stderr, "psgrad: {}\n", cut_long_words(saved.error()));
      code = 1;
    }
  }
  if (code == 0 && summary->interrupted_by != 0) return exit_code_for_signal(summary->interrupted_by);
  return code;
}

}  // namespace psgrad
