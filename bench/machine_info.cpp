// Machine facts read from /proc and the build; the commit comes from git through popen.
#include "bench/machine_info.hpp"

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include <Eigen/Core>
#include <fmt/format.h>

namespace psgrad::bench {

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown";
}

std::string short_commit(const std::string& source_dir) {
  const auto command = fmt::format("git -C '{}' rev-parse --short HEAD 2>/dev/null", source_dir);
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "unknown";
  std::array<char, 64> buffer{};
  std::string commit;
  while (std::fgets(buffer.data(), buffer.size(), pipe)) commit += buffer.data();
  pclose(pipe);
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
  return commit.empty() ? "unknown" : commit;
}

std::string local_time(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  localtime_r(&now, &parts);
  std::array<char, 64> text{};
  std::strftime(text.data(), text.size(), format, &parts);
  return text.data();
}

std::string vector_isa() {
#if defined(EIGEN_VECTORIZE_AVX512)
  return "AVX-512";
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
  return "AVX2+FMA";
#elif defined(EIGEN_VECTORIZE_AVX)
  return "AVX";
#elif defined(EIGEN_VECTORIZE_SSE2)
  return "SSE2";
#else
  return "none";
#endif
}

}  // namespace

std::string read_load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(file >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

MachineInfo collect_machine_info(const std::string& source_dir) {
  MachineInfo info;
  info.cpu_model = cpu_model();
  info.cores = std::max(1u, std::thread::hardware_concurrency());
  info.commit = short_commit(source_dir);
  info.date = local_time("%Y-%m-%d");
  info.timestamp = local_time("%Y-%m-%dT%H:%M:%S%z");
#if defined(__clang__)
  info.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  info.compiler = fmt::format("gcc {}", __VERSION__);
#endif
  info.vector_isa = vector_isa();
  info.eigen_version = fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  info.load_average = read_load_average();
  return info;
}

nlohmann::json to_json(const MachineInfo& info) {
  return {{"cpu_model", info.cpu_model}, {"cores", info.cores},       {"commit", info.commit},
          {"date", info.date},           {"timestamp", info.timestamp}, {"compiler", info.compiler},
          {"vector_isa", info.vector_isa}, {"eigen", info.eigen_version},
          {"load_average_at_start", info.load_average}};
}

}  // namespace psgrad::bench
