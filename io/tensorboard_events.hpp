// TensorBoard event files written without TensorFlow: each record is an Event protobuf in TFRecord
// framing (length, masked CRC-32C of the length, data, masked CRC-32C of the data), the first one
// naming the format ("brain.Event:2"), the others holding scalars (Summary.Value{tag, simple_value}).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "io/owned_file.hpp"
#include "model/result.hpp"

namespace psgrad {

// CRC-32C (Castagnoli), as TFRecord frames use it, and the mask TensorFlow puts over stored CRCs.
std::uint32_t crc32c(const void* data, std::size_t size);
std::uint32_t masked_crc32c(const void* data, std::size_t size);

// One record around `data`.
std::string tfrecord(const std::string& data);

struct Scalar {
  std::string tag;  // "dev/accuracy"
  float value = 0;
};

// Event protobufs: the file's first event, and one of scalars at a step.
std::string file_version_event(double wall_time);
std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& scalars);

// Seconds since 1970, as Event.wall_time counts them.
double unix_seconds(std::chrono::system_clock::time_point time);

class EventFile {
  struct Key {  // only create_in() makes one, so every EventFile holds an open file
    explicit Key() = default;
  };

 public:
  // Creates the folder if needed and, in it, events.out.tfevents.<seconds>.<host>.<pid> (the name
  // TensorBoard looks for), starting with the file-version event.
  static Result<std::unique_ptr<EventFile>> create_in(const std::string& folder);

  EventFile(Key, std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  const std::string& path() const { return path_; }

  // Flushed at once, so TensorBoard shows a run while it trains. Not thread-safe.
  Status write_scalars(std::int64_t step, const std::vector<Scalar>& scalars);

 private:
  Status write_record(const std::string& event);

  std::string path_;
  OwnedFile file_;
};

}  // namespace psgrad
