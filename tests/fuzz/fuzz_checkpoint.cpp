// libFuzzer target: arbitrary bytes through read_checkpoint, which must refuse or accept them cleanly.
#include <cstdint>
#include <cstdlib>

#include "io/checkpoint_file.hpp"
#include "tests/fuzz/temp_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static psgrad::fuzz::TempInputFile input("input.ckpt");
  auto checkpoint = psgrad::read_checkpoint(input.write(data, size));
  // No write-back comparison here: write_checkpoint fsyncs, which would cut the executions per second
  // by orders of magnitude. The sanitizers catch the reader's own faults.
  if (!checkpoint && checkpoint.error().empty()) std::abort();
  return 0;
}
