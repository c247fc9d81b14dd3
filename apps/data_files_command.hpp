// `psgrad data debian-packages` and `psgrad data click-logs`: data files of named columns for sparse
// inputs, from this machine's package lists or from a made-up click model.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace psgrad {

struct DebianPackagesOptions {
  std::string lists = "/var/lib/apt/lists";
  std::string out;
};

struct ClickLogsOptions {
  std::uint64_t rows = 0;
  std::string out;
  std::uint64_t seed = 0;
  std::uint64_t truth_seed = 0;
};

void add_debian_packages_options(CLI::App& command, DebianPackagesOptions& options);
void add_click_logs_options(CLI::App& command, ClickLogsOptions& options);

int run_debian_packages(const DebianPackagesOptions& options);
int run_click_logs(const ClickLogsOptions& options);

}  // namespace psgrad
