// What the numbers were measured on: CPU, cores, build, commit and date, for the JSON and the table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace psgrad::bench {

struct MachineInfo {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  unsigned cores = 0;     // hardware threads the process may use
  std::string commit;     // `git rev-parse --short HEAD`, "unknown" outside a checkout
  std::string date;       // YYYY-MM-DD, local time
  std::string timestamp;  // ISO 8601, local time
  std::string compiler;
  std::string vector_isa;  // what Eigen vectorizes with in this build
  std::string eigen_version;
  std::string load_average;  // /proc/loadavg at start: other work on a shared machine skews figures
};

// The first three fields of /proc/loadavg ("1-, 5- and 15-minute").
std::string read_load_average();

MachineInfo collect_machine_info(const std::string& source_dir);
nlohmann::json to_json(const MachineInfo& info);

}  // namespace psgrad::bench
