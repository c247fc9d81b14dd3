// Appends metrics records to a JSON-lines file, one flushed line each, so a crash keeps the lines so far.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "io/metrics_records.hpp"
#include "io/owned_file.hpp"
#include "model/result.hpp"

namespace psgrad {

// 20261207T050312Z: a time in file names, sorting as it runs.
std::string compact_utc(std::chrono::system_clock::time_point time);

class MetricsWriter {
  struct Key {  // only create() and create_in() can make one, so every writer holds an open file
    explicit Key() = default;
  };

 public:
  // Creates (or truncates) path; its folder must exist.
  static Result<std::unique_ptr<MetricsWriter>> create(const std::string& path);
  // Creates <folder>/<UTC time>-<mode>.jsonl, the folder too if needed; never overwrites an earlier
  // run's file (a second run in the same second gets "-2", and so on).
  static Result<std::unique_ptr<MetricsWriter>> create_in(const std::string& folder, const std::string& mode,
                                                          std::chrono::system_clock::time_point now);

  MetricsWriter(Key, std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  const std::string& path() const { return path_; }

  // Safe to call from several threads: lines never interleave.
  Status write(const MetricsRun& run);
  Status write(const MetricsEval& eval);
  Status write(const MetricsSummary& summary);
  Status write_failure(const std::string& error);
  // A run stopped early by a signal: which one, where it stood and where its checkpoint is.
  Status write_interruption(const std::string& signal, std::uint64_t steps, const std::string& checkpoint);

 private:
  Status write_line(const std::string& line);

  std::string path_;
  OwnedFile file_;
  std::mutex mutex_;
};

// "2024-05-01T12:34:56Z"
std::string utc_iso8601(std::chrono::system_clock::time_point time);

}  // namespace psgrad
