// Moves [ray] num_workers into [cluster] and notes the Ray-only keys it ignores.
#include "io/ray_section.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "io/toml_text.hpp"

namespace psgrad {

namespace {

constexpr const char* kRayWorkers = "ray.num_workers";
constexpr const char* kClusterWorkers = "cluster.num_workers";

// 2: a command-line flag, 1: --set, 0: the file.
int precedence(const OverrideRecord& record, const std::string& path) {
  if (record.flags.count(path)) return 2;
  return record.paths.count(path) ? 1 : 0;
}

}  // namespace

const std::vector<std::string>& ignored_ray_keys() {
  static const std::vector<std::string> keys = {
      "address",  "num_cpus",         "num_gpus",          "resources",      "object_store_memory",
      "local_mode", "ignore_reinit_error", "include_dashboard", "dashboard_host", "dashboard_port",
      "namespace", "runtime_env",     "logging_level",     "log_to_driver"};
  return keys;
}

Status fold_ray_section(toml::table& document, const std::string& source, OverrideRecord& record,
                        KeyLocations& locations, std::vector<std::string>& notes) {
  const auto* node = document.get("ray");
  if (!node) return success();
  const Validator validator(source, record, locations);
  const auto* ray = node->as_table();
  if (!ray) return validator.fail("ray", "expected a table, got " + describe_node(*node));
  std::vector<std::string> ignored;
  const toml::node* workers = nullptr;
  for (const auto& [key_node, value] : *ray) {
    const std::string key(key_node.str());
    const auto& known = ignored_ray_keys();
    if (key == "num_workers") workers = &value;
    else if (std::find(known.begin(), known.end(), key) != known.end()) ignored.push_back("ray." + key);
    else
      return validator.fail("ray." + key, "unknown key; [ray] takes num_workers (read as cluster.num_workers) and "
                                          "ignores Ray's own " + join(known));
  }
  if (workers) {
    auto* cluster = document.get_as<toml::table>("cluster");
    const bool both = cluster && cluster->contains("num_workers");
    const int ray_precedence = precedence(record, kRayWorkers);
    const int cluster_precedence = precedence(record, kClusterWorkers);
    if (both && ray_precedence == cluster_precedence)
      return validator.fail(kRayWorkers, fmt::format("conflicts with {}; set the number of workers in one of them",
                                                     kClusterWorkers));
    if (!both || ray_precedence > cluster_precedence) {
      if (!cluster) {
        document.insert_or_assign("cluster", toml::table{});
        cluster = document.get_as<toml::table>("cluster");
      }
      cluster->insert_or_assign("num_workers", *workers);
      locations.written_as[kClusterWorkers] = kRayWorkers;
      if (const auto line = locations.lines.find(kRayWorkers); line != locations.lines.end())
        locations.lines[kClusterWorkers] = line->second;
      if (ray_precedence == 1) record.paths.insert(kClusterWorkers);
    }
  }
  document.erase("ray");
  if (!ignored.empty())
    notes.push_back(fmt::format("{}: {} ignored: Ray's settings for its own cluster; psgrad starts its workers "
                                "itself (cluster.num_workers{})",
                                source, join(ignored), workers ? ", which ray.num_workers sets" : ""));
  return success();
}

}  // namespace psgrad
