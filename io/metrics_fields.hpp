// Each metrics record's JSON keys with the members they hold, listed once for the writer and the reader.
#pragma once

#include <tuple>

#include "io/metrics_records.hpp"

namespace psgrad {

// One key of a line and the member it holds (const when the record is being written).
template <class Member>
struct MetricsField {
  const char* key;
  Member& member;
  bool added_later;  // newer than the first metrics files: a line without it reads as the default
};

template <class Member>
MetricsField<Member> field(const char* key, Member& member) {
  return {key, member, false};
}

template <class Member>
MetricsField<Member> later_field(const char* key, Member& member) {
  return {key, member, true};
}

// visit(field) for each field, in the order a line holds them.
template <class Fields, class Visit>
void for_each_field(const Fields& fields, Visit&& visit) {
  std::apply([&](const auto&... each) { (visit(each), ...); }, fields);
}

// Appended to the eval and summary lines after their other keys, so readers of the earlier keys
// (bench/straggler.sh) keep working.
template <class Workers>
auto worker_fields(Workers& workers) {
  return std::make_tuple(later_field("dropped_per_worker", workers.dropped_per_worker),
                         later_field("compute_ms_mean_per_worker", workers.compute_ms_mean_per_worker),
                         later_field("wait_ms_mean_per_worker", workers.wait_ms_mean_per_worker),
                         later_field("staleness_histogram", workers.staleness_histogram));
}

// After the line's "type" and "format".
template <class Run>
auto run_fields(Run& run) {
  return std::make_tuple(later_field("command", run.command), field("mode", run.mode),
                         field("num_workers", run.num_workers), field("iterations", run.iterations),
                         field("config_hash", run.config_hash), later_field("data", run.data),
                         field("start_time", run.start_time), field("config", run.config));
}

// After the line's "type"; likewise summary_fields.
template <class Eval>
auto eval_fields(Eval& eval) {
  return std::tuple_cat(
      std::make_tuple(field("iteration", eval.iteration), field("version", eval.version),
                      field("wall_seconds", eval.wall_seconds), field("samples", eval.samples),
                      field("dev_accuracy", eval.dev_accuracy), field("dev_loss", eval.dev_loss),
                      field("train_loss", eval.train_loss), field("staleness_mean", eval.staleness_mean),
                      field("staleness_max", eval.staleness_max),
                      field("gradients_per_worker", eval.gradients_per_worker), field("final", eval.final)),
      worker_fields(eval.workers));
}

template <class Summary>
auto summary_fields(Summary& summary) {
  return std::tuple_cat(
      std::make_tuple(field("mode", summary.mode), field("steps", summary.steps), field("samples", summary.samples),
                      field("final_accuracy", summary.final_accuracy), field("wall_seconds", summary.wall_seconds),
                      field("training_seconds", summary.training_seconds),
                      field("samples_per_second", summary.samples_per_second),
                      field("staleness_min", summary.staleness_min), field("staleness_mean", summary.staleness_mean),
                      field("staleness_max", summary.staleness_max),
                      field("gradients_per_worker", summary.gradients_per_worker),
                      field("final_version", summary.final_version), field("weights_hash", summary.weights_hash)),
      worker_fields(summary.workers));
}

}  // namespace psgrad
