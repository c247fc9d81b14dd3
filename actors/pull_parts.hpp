// A pull of very many keys (the evaluator's: the whole dev set) cut into pulls of a bounded number of
// keys, and their answers joined back: no answer is one message of hundreds of megabytes that keeps a
// shard process off its connection for seconds.
#pragma once

#include <cstddef>
#include <vector>

#include "model/result.hpp"
#include "payloads/sparse_messages.hpp"

namespace psgrad {

// The keys an evaluator asks a shard for in one message, at most: 8 MB of rows at width 32.
constexpr std::size_t kKeysPerPullPart = std::size_t{1} << 16;

// `pull` in parts of at most max_keys keys (at least one part, an empty pull too), in key order, each at
// the pull's version. Only the last part carries the evaluation mark: a sync shard lets the step it
// holds go once that part is answered, and the parts before reach it first (messages from one actor to
// another keep their order), so every part is answered with the rows of the same step.
std::vector<RowPull> cut_pull(const RowPull& pull, std::size_t max_keys);

// The answers to cut_pull's parts, in the parts' order, as the answer to the whole pull (at the last
// part's version). Fails when a table comes back at two widths.
Result<PulledRows> join_pull_answers(std::vector<PulledRows> answers);

}  // namespace psgrad
