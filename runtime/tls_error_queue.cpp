// CAF 0.17's OpenSSL module calls SSL_read, SSL_write, SSL_accept and SSL_connect for every TLS
// connection on the one network thread, and asks SSL_get_error what a call's result means.
// SSL_get_error answers from the thread's error queue, which OpenSSL requires to be empty before
// each call; CAF empties it only when its logging is compiled in, and Debian's build has none. So an
// error left by one connection (a peer gone without a TLS goodbye, which OpenSSL 3 reports as
// "unexpected eof while reading", or bytes that are not TLS) made the next read on any other
// connection fail, and CAF closed that connection too: a worker's exit cut the server off from a
// shard process, a port scan could drop every worker. The four calls below are found before
// libssl's (the executable's symbols come first), clear the queue, and go on to libssl's own.
#include "runtime/tls_error_queue.hpp"

#include <cstdlib>

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace {

template <class Function>
Function next_definition(const char* name) {
  // A missing libssl symbol means a broken installation, not a recoverable condition.
  auto found = reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
  if (found == nullptr) std::abort();
  return found;
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buffer, int size) {
  static const auto next = next_definition<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buffer, size);
}

int SSL_write(SSL* ssl, const void* buffer, int size) {
  static const auto next = next_definition<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buffer, size);
}

int SSL_accept(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return next(ssl);
}

int SSL_connect(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}

}  // extern "C"

namespace psgrad {

bool tls_error_queue_isolated() {
  // The definition a shared library's call binds to is the first in the global scope; it must be
  // the one in this file.
  Dl_info found{};
  Dl_info ours{};
  const auto first = ::dlsym(RTLD_DEFAULT, "SSL_read");
  return first != nullptr && ::dladdr(first, &found) != 0 &&
         ::dladdr(reinterpret_cast<void*>(&tls_error_queue_isolated), &ours) != 0 &&
         found.dli_fbase == ours.dli_fbase;
}

}  // namespace psgrad
