// Small named-column files and configs for the sparse command-line tests: the colour rule of
// sparse_fixtures.hpp written as JSON Lines, with string labels.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "model/random.hpp"

namespace psgrad::testing {

inline const char* const kColourNames[] = {"blue", "green", "red"};

// Each line: a "words" text whose tokens share one colour (a token's number mod 3), a "noise" id list
// unrelated to it, and the colour's name as "colour". Token numbers start at first_token.
inline void write_colour_jsonl(const std::string& path, std::size_t count, std::uint64_t seed,
                               std::uint64_t first_token = 0) {
  std::ofstream out(path, std::ios::binary);
  Random rng(seed);
  for (std::size_t e = 0; e < count; ++e) {
    const auto colour = rng.below(3);
    const std::size_t length = 1 + rng.below(4);
    std::string words;
    for (std::size_t i = 0; i < length; ++i)
      words += (i ? " " : "") + std::string("w") + std::to_string(first_token + 3 * rng.below(20) + colour);
    out << "{\"words\":\"" << words << "\",\"noise\":[" << rng.below(10) << "],\"colour\":\""
        << kColourNames[colour] << "\"}\n";
  }
}

// A config for such a file: hashembed_mlp.v1 with small tables, 2 workers.
inline std::string colour_config(const std::string& data_path, const std::string& extra = "") {
  return "[training]\niterations = 60\nbatch_size = 32\n\n[evaluation]\nfrequency = 20\n\n"
         "[model]\n\"@layers\" = \"hashembed_mlp.v1\"\nembedding_widths = [8, 4]\nembedding_rows = [500, 50]\n"
         "hidden_width = 16\n\n[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nlearn_rate = 0.01\n\n"
         "[data]\npath = \"" + data_path + "\"\nlabel = \"colour\"\ndev_fraction = 0.25\nmax_tokens = 16\n\n"
         "[data.columns]\nwords = \"text\"\nnoise = \"ids\"\n\n[cluster]\nnum_workers = 2\n" + extra;
}

}  // namespace psgrad::testing
