// Collects the build's version facts from compile-time macros (and the commit cmake recorded).
#include "apps/version_text.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <toml++/impl/version.h>  // the version macros only

#include "caf/config.hpp"
#include "psgrad_commit.hpp"

namespace psgrad {

namespace {

// The vector instructions this binary was compiled for: they decide speed and (through Eigen's
// kernels) the exact bits of a run, so two machines' hashes are comparable only when these agree.
std::string vector_flags() {
  std::string flags;
  auto add = [&flags](const char* name) { flags += (flags.empty() ? "" : " ") + std::string(name); };
#ifdef __SSE4_2__
  add("SSE4.2");
#endif
#ifdef __AVX__
  add("AVX");
#endif
#ifdef __AVX2__
  add("AVX2");
#endif
#ifdef __FMA__
  add("FMA");
#endif
#ifdef __AVX512F__
  add("AVX512F");
#endif
  return flags.empty() ? "none beyond x86-64 SSE2 (a portable build)" : flags;
}

}  // namespace

std::string version_text() {
  return fmt::format("psgrad {} (commit {})\nCAF {}.{}.{}, Eigen {}.{}.{}, toml++ {}.{}.{}, fmt {}.{}.{}\n"
                     "vector instructions: {}",
                     PSGRAD_VERSION, PSGRAD_COMMIT, CAF_MAJOR_VERSION, CAF_MINOR_VERSION, CAF_PATCH_VERSION,
                     EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, TOML_LIB_MAJOR, TOML_LIB_MINOR,
                     TOML_LIB_PATCH, FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100, vector_flags());
}

}  // namespace psgrad
