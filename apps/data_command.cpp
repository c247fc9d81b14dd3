#include "apps/data_command.hpp"

#include <fmt/format.h>

#include "io/dataset.hpp"

namespace psgrad {

int run_data_prepare(const std::string& npm_package_dir, const std::string& out_dir) {
  auto converted = convert_npm_digits(npm_package_dir, out_dir);
  if (!converted) {
    fmt::print(stderr, "psgrad: {}\n", converted.error());
    return 2;
  }
  auto check = load_data_folder(out_dir);
  if (!check) {
    fmt::print(stderr, "psgrad: {}\n", check.error());
    return 2;
  }
  fmt::print("wrote {} ({} train / {} test images)\n", out_dir, check->train->count, check->dev->count);
  return 0;
}

}  // namespace psgrad
