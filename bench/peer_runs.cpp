// The peer is a separate python3 process so that the bench neither links nor requires PyTorch: a
// machine without python3-torch gets a "skipped" row instead of a failed section.
#include "bench/peer_runs.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "bench/captured_run.hpp"
#include "bench/machine_load.hpp"

namespace psgrad::bench {

namespace fs = std::filesystem;

std::string default_python() {
  if (const char* chosen = std::getenv("PSGRAD_PYTHON"); chosen && *chosen) return chosen;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

namespace {

// posix_spawn takes a path, not a command name: a bare name is looked up on PATH as a shell would.
std::string find_program(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    const auto candidate = fs::path(folder.empty() ? "." : folder) / command;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return command;
}

// The script's result is its last line that parses as a JSON object; warnings may come before it
// (run_captured interleaves stderr with stdout).
std::optional<nlohmann::json> last_json_object(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  std::optional<nlohmann::json> found;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '{') continue;
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) found = std::move(parsed);
  }
  return found;
}

void record_skipped(Report& report, nlohmann::json& details, const char* section, const std::string& reason) {
  fmt::print(stderr, "psgrad_bench: 8 PyTorch peer: {} ({})\n", kTorchSkipped, reason);
  details["status"] = kTorchSkipped;
  details["reason"] = reason;
  // Empty rows, as an unmeasured ratio is: the keys stay in the JSON and the table shows "—".
  report.add({"peer.torch.samples_per_second", section, "PyTorch, best thread count: samples/s", Stats{},
              "samples/s", kTorchSkipped});
  report.add({"peer.torch.ratio", section, "local async 2 workers ÷ PyTorch best", Stats{}, "ratio", kTorchSkipped});
}

}  // namespace

void measure_peer_runs(BenchContext& context, Report& report) {
  const char* section = "8 peer";
  auto& details = report.details("peer")["torch"];
  const auto& options = context.options;
  const auto& effort = context.effort;
  // The folder section 3 trained on, so that both sides read the same examples.
  const auto folder = resolve_data_folder("mnist", options.data_dir);
  if (!folder) throw std::runtime_error(folder.error());
  const std::string python = find_program(options.python_path);
  const std::string script = options.source_dir + "/bench/peers/torch_mlp.py";
  // --quick keeps every timed run at effort.seconds_per_sample (a few steps): importing torch is
  // most of the ~3 s it then takes.
  const std::vector<std::string> argv = {
      python, script, "--data", *folder, "--threads", "1,2",
      "--seconds", fmt::format("{}", effort.seconds_per_sample),
      "--warmup-seconds", options.quick ? "0.05" : "0.5",
      "--repeats", std::to_string(effort.repeats),
      "--batch-size", std::to_string(context.job.training.batch_size)};
  details["python"] = python;

  wait_for_quiet_machine(effort.quiet_wait_seconds);
  const CpuMeter meter;
  const auto run = run_captured(argv, std::chrono::seconds(options.quick ? 60 : 300));
  const double other_cores = meter.other_cores();
  if (!run.started) return record_skipped(report, details, section, python + ": " + run.output);
  const auto result = last_json_object(run.output);
  if (run.exit_code != 0 || !result)
    throw std::runtime_error(fmt::format("`{} {}` failed (exit {}, signal {}{}):\n{}", python, script, run.exit_code,
                                         run.signal, run.timed_out ? ", timed out" : "", run.output));
  if (result->contains("skipped"))
    return record_skipped(report, details, section, result->value("error", std::string("torch not importable")));
  details["result"] = *result;
  details["status"] = "measured";

  const auto& runs = result->at("runs");
  const auto note = fmt::format("{} x {} s, torch {}, BLAS: {}", effort.repeats, effort.seconds_per_sample,
                                result->value("torch_version", "?"), result->value("blas_kind", "?"));
  for (const auto& [threads, rates] : runs.items())
    report.add({fmt::format("peer.torch.t{}.samples_per_second", threads), section,
                fmt::format("PyTorch, {} thread{}: samples/s", threads, threads == "1" ? "" : "s"),
                summarize(rates.get<std::vector<double>>()), "samples/s", note});
  const int best_threads = result->at("best_threads").get<int>();
  const auto best = summarize(runs.at(std::to_string(best_threads)).get<std::vector<double>>());
  report.add({"peer.torch.samples_per_second", section, "PyTorch, best thread count: samples/s", best, "samples/s",
              fmt::format("{} thread{}; other processes: {:.2f} cores", best_threads, best_threads == 1 ? "" : "s",
                          other_cores)});
  // psgrad is the numerator here, so ratio() alone would show 0 rather than "—" when section 3 did
  // not run.
  const auto& psgrad_rate = context.baselines.local_async_2_workers;
  report.add({"peer.torch.ratio", section, "local async 2 workers ÷ PyTorch best",
              psgrad_rate.samples.empty() ? Stats{} : ratio(psgrad_rate, best), "ratio",
              psgrad_rate.samples.empty() ? "section 3 not run"
                                          : fmt::format("psgrad {:.0f} samples/s", psgrad_rate.median)});
}

}  // namespace psgrad::bench
