// Something that runs the two halves of a step's work, maybe the second on another thread.
#pragma once

#include <functional>

namespace psgrad {

class TwoPartRunner {
 public:
  virtual ~TwoPartRunner() = default;
  // Runs part(0) and part(1) and returns once both are done; each exactly once, in any order, perhaps
  // at the same time on two threads.
  virtual void run(const std::function<void(int part)>& part) = 0;
};

}  // namespace psgrad
