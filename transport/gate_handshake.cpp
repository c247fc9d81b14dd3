// Builds and checks the gate's challenge, answer and verdict with OpenSSL's HMAC-SHA256.
#include "transport/gate_handshake.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace psgrad::gate {

namespace {

constexpr char challenge_magic[magic_size + 1] = "psgrad?1";
constexpr char answer_magic[magic_size + 1] = "psgrad!1";

void put_u32(std::uint8_t* out, std::uint32_t value) {
  for (int k = 0; k < 4; ++k) out[k] = static_cast<std::uint8_t>(value >> (24 - 8 * k));
}

std::uint32_t get_u32(const std::uint8_t* in) {
  std::uint32_t value = 0;
  for (int k = 0; k < 4; ++k) value = (value << 8) | in[k];
  return value;
}

void fill_random(std::uint8_t* out, std::size_t size) {
  if (RAND_bytes(out, static_cast<int>(size)) == 1) return;
  // OpenSSL's generator failing is near impossible; a nonce from the OS's device is still unique.
  std::random_device device;
  for (std::size_t k = 0; k < size; ++k) out[k] = static_cast<std::uint8_t>(device());
}

using Mac = std::array<std::uint8_t, mac_size>;

Mac hmac(const std::string& token, const char* role, const std::uint8_t* first, std::size_t first_size,
         const std::uint8_t* second, std::size_t second_size) {
  std::vector<std::uint8_t> message(role, role + std::strlen(role));
  message.insert(message.end(), first, first + first_size);
  message.insert(message.end(), second, second + second_size);
  Mac mac{};
  unsigned int size = 0;
  // An empty key is fine for HMAC; OpenSSL wants a non-null pointer for it.
  static const std::uint8_t no_key = 0;
  const void* key = token.empty() ? static_cast<const void*>(&no_key) : token.data();
  HMAC(EVP_sha256(), key, static_cast<int>(token.size()), message.data(), message.size(), mac.data(), &size);
  return mac;
}

const std::uint8_t* client_nonce(const Answer& answer) { return answer.data() + magic_size + 4; }
const std::uint8_t* client_mac(const Answer& answer) { return answer.data() + magic_size + 4 + nonce_size; }

Mac client_proof(const Challenge& challenge, const Answer& answer, const std::string& token) {
  return hmac(token, "worker", challenge.data(), challenge.size(), client_nonce(answer), nonce_size);
}

Mac server_proof(const Answer& answer, const std::string& token) {
  return hmac(token, "server", answer.data(), answer.size(), nullptr, 0);
}

bool starts_with(const std::uint8_t* bytes, std::size_t size, const char* text) {
  const auto length = std::strlen(text);
  return size >= length && std::memcmp(bytes, text, length) == 0;
}

}  // namespace

Challenge make_challenge(std::uint32_t protocol) {
  Challenge challenge{};
  std::memcpy(challenge.data(), challenge_magic, magic_size);
  put_u32(challenge.data() + magic_size, protocol);
  fill_random(challenge.data() + magic_size + 4, nonce_size);
  return challenge;
}

Answer make_answer(const Challenge& challenge, std::uint32_t protocol, const std::string& token) {
  Answer answer{};
  std::memcpy(answer.data(), answer_magic, magic_size);
  put_u32(answer.data() + magic_size, protocol);
  fill_random(answer.data() + magic_size + 4, nonce_size);
  const auto mac = client_proof(challenge, answer, token);
  std::copy(mac.begin(), mac.end(), answer.begin() + magic_size + 4 + nonce_size);
  return answer;
}

Result<std::uint32_t> read_challenge(const Challenge& challenge) {
  if (std::memcmp(challenge.data(), challenge_magic, magic_size) != 0)
    return Error{"it answers, but not with psgrad's greeting (another program, or a psgrad server in TLS mode?)"};
  return get_u32(challenge.data() + magic_size);
}

bool could_be_answer(const std::uint8_t* bytes, std::size_t size) {
  return std::memcmp(bytes, answer_magic, std::min(size, magic_size)) == 0;
}

std::uint32_t answer_protocol(const Answer& answer) { return get_u32(answer.data() + magic_size); }

Verdict judge_answer(const Challenge& challenge, const Answer& answer, std::uint32_t protocol,
                     const std::string& token) {
  Verdict verdict{};
  put_u32(verdict.data() + 1, protocol);
  if (answer_protocol(answer) != protocol) {
    verdict[0] = static_cast<std::uint8_t>(VerdictCode::other_protocol);
    return verdict;
  }
  const auto expected = client_proof(challenge, answer, token);
  if (CRYPTO_memcmp(expected.data(), client_mac(answer), mac_size) != 0) {
    verdict[0] = static_cast<std::uint8_t>(VerdictCode::wrong_token);
    return verdict;
  }
  verdict[0] = static_cast<std::uint8_t>(VerdictCode::admitted);
  const auto proof = server_proof(answer, token);
  std::copy(proof.begin(), proof.end(), verdict.begin() + 5);
  return verdict;
}

Status read_verdict(const Verdict& verdict, const Answer& answer, std::uint32_t protocol, const std::string& token) {
  const auto server_protocol = get_u32(verdict.data() + 1);
  switch (static_cast<VerdictCode>(verdict[0])) {
    case VerdictCode::admitted: {
      const auto proof = server_proof(answer, token);
      if (CRYPTO_memcmp(proof.data(), verdict.data() + 5, mac_size) != 0)
        return Error{"the server admitted us without proving it holds the join token (not the psgrad server "
                     "you meant?)"};
      return success();
    }
    case VerdictCode::wrong_token:
      return Error{"wrong join token"};
    case VerdictCode::other_protocol:
      return Error{fmt::format("protocol version {} does not match the server's {}", protocol, server_protocol)};
  }
  return Error{fmt::format("unknown verdict {} from the server", verdict[0])};
}

std::string describe_opening(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return "nothing";
  for (const char* method : {"GET ", "POST ", "HEAD ", "PUT ", "DELETE ", "OPTIONS ", "CONNECT ", "PATCH "})
    if (starts_with(bytes, size, method)) return "an HTTP request";
  if (size >= 2 && bytes[0] == 0x16 && bytes[1] == 0x03) return "a TLS handshake (this server is in plain mode)";
  if (starts_with(bytes, size, answer_magic)) return "a psgrad answer";
  return fmt::format("{} bytes that are not psgrad's greeting", size);
}

}  // namespace psgrad::gate
