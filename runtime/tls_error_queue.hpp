// Gives every TLS read, write and handshake of CAF's OpenSSL module an empty OpenSSL error queue.
#pragma once

namespace psgrad {

// Whether CAF's calls to SSL_read, SSL_write, SSL_accept and SSL_connect reach psgrad's versions
// (runtime/tls_error_queue.cpp), which clear the thread's error queue first.
bool tls_error_queue_isolated();

}  // namespace psgrad
