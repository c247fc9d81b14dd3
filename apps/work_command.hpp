// `psgrad work`: joins a server with one DataWorker and serves gradient requests until it is done.
#pragma once

#include <string>

namespace psgrad {

struct WorkOptions {
  std::string connect;  // HOST:PORT
  int threads = 0;
  std::string data;  // a data folder of IDX files, or the directory of named data sets
  std::string token;
  bool retry = false;  // keep trying to reach the server for much longer
  bool quiet = false;
  std::string tls_certificate, tls_key, tls_ca;  // connect over TLS with this identity
};

int run_work_command(const WorkOptions& options);

}  // namespace psgrad
