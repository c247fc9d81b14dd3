// Collects every figure of one harness run, prints it as a table and turns it into JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/statistics.hpp"

namespace psgrad::bench {

struct Row {
  std::string key;      // stable, machine-readable: "local.sync.w2.samples_per_second"
  std::string section;  // "3 local"
  std::string name;     // what a reader sees
  Stats stats;
  std::string unit;
  std::string note;
};

// One of the targets: met when value >= threshold (or <= for an upper bound).
struct TargetCheck {
  std::string name;
  double value = 0.0;
  double threshold = 0.0;
  bool is_upper_bound = false;
  bool met() const { return is_upper_bound ? value <= threshold : value >= threshold; }
};

class Report {
 public:
  void add(Row row) { rows_.push_back(std::move(row)); }
  // The row with this key, or nullptr (a section that failed leaves its rows out).
  const Row* find(const std::string& key) const;
  void add_target(TargetCheck target) { targets_.push_back(std::move(target)); }
  // Facts that are not timings (pointers equal, child process peaks, iteration counts).
  nlohmann::json& details(const std::string& section) { return details_[section]; }

  void print_table(std::FILE* out) const;
  nlohmann::json to_json() const;

 private:
  std::vector<Row> rows_;
  std::vector<TargetCheck> targets_;
  nlohmann::json details_ = nlohmann::json::object();
};

}  // namespace psgrad::bench
