#include "bench/peer_scripts.hpp"

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

// The script's result is its last line that parses as a JSON object; warnings and torch's own log
// lines may come before it (run_captured interleaves stderr with stdout).
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

}  // namespace

PeerScriptRun run_peer_script(const BenchContext& context, const std::string& script,
                              const std::vector<std::string>& arguments, std::chrono::seconds timeout) {
  const std::string python = find_program(context.options.python_path);
  const std::string path = context.options.source_dir + "/bench/peers/" + script;
  std::vector<std::string> argv = {python, path};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  PeerScriptRun peer;
  const CpuMeter meter;
  const auto run = run_captured(argv, timeout);
  peer.other_cores = meter.other_cores();
  if (!run.started) {
    peer.skipped = true;
    peer.reason = python + ": " + run.output;
    return peer;
  }
  const auto result = last_json_object(run.output);
  if (run.exit_code != 0 || !result)
    throw std::runtime_error(fmt::format("`{} {}` failed (exit {}, signal {}{}):\n{}", python, path, run.exit_code,
                                         run.signal, run.timed_out ? ", timed out" : "", run.output));
  if (result->contains("skipped")) {
    peer.skipped = true;
    peer.reason = result->value("error", std::string("torch not importable"));
  }
  peer.result = *result;
  return peer;
}

bool on_reference_blas(const nlohmann::json& result) { return result.value("blas_kind", "") == "reference"; }

std::string torch_note(const nlohmann::json& result) {
  const auto core = result.value("blas_core", std::string());
  return fmt::format("torch {}, BLAS: {}{}", result.value("torch_version", "?"), result.value("blas_kind", "?"),
                     core.empty() ? "" : " (" + core + ")");
}

}  // namespace psgrad::bench
