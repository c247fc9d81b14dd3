// Prints what psgrad's Thinc reader makes of a config file as JSON, or its one-line error (exit 1), for
// tests/thinc_agreement_test.py to compare with Thinc's own Config().from_str.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "io/thinc_config.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: thinc_config_dump CONFIG.cfg\n", stderr);
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "%s: cannot open\n", argv[1]);
    return 2;
  }
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto config = psgrad::read_thinc_config(text, argv[1]);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().c_str());
    return 1;
  }
  psgrad::ThincValue root;
  root.data = config->sections;
  std::printf("%s\n", psgrad::json_text(root).c_str());
  return 0;
}
