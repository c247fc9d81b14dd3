#include "model/gemm_blocking.hpp"

#include <Eigen/Core>

namespace psgrad {

void pin_gemm_blocking() {
  static const bool pinned = [] {
    Eigen::setCpuCacheSizes(gemm_l1_bytes, Eigen::l2CacheSize(), Eigen::l3CacheSize());
    return true;
  }();
  (void)pinned;
}

}  // namespace psgrad
