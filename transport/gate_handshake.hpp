// The bytes of psgrad's gate: a challenge/response on the join token that a plain-mode connection
// must pass before any byte of it reaches CAF's middleman.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/result.hpp"

namespace psgrad {

// CAF 0.17 allocates whatever size a BASP header declares before checking anything, so a server must
// not hand a connection to CAF before it knows the peer is a psgrad process holding the join token.
//
//   server -> client  challenge: "psgrad?1" | u32 protocol | 32-byte server nonce            (44 bytes)
//   client -> server  answer:    "psgrad!1" | u32 protocol | 32-byte client nonce
//                                | HMAC-SHA256(token, "worker" | challenge | client nonce)  (76 bytes)
//   server -> client  verdict:   u8 code | u32 protocol | HMAC-SHA256(token, "server" | answer)  (37 bytes)
//
// The nonces make every exchange fresh (no replay); the server's proof lets the client know it talks to
// a server that holds the same token before its own middleman reads a byte. The token never crosses
// the wire. Integers are big-endian.
namespace gate {

constexpr std::size_t nonce_size = 32;
constexpr std::size_t mac_size = 32;
constexpr std::size_t magic_size = 8;
constexpr std::size_t challenge_size = magic_size + 4 + nonce_size;
constexpr std::size_t answer_size = magic_size + 4 + nonce_size + mac_size;
constexpr std::size_t verdict_size = 1 + 4 + mac_size;

using Challenge = std::array<std::uint8_t, challenge_size>;
using Answer = std::array<std::uint8_t, answer_size>;
using Verdict = std::array<std::uint8_t, verdict_size>;

enum class VerdictCode : std::uint8_t { admitted = 0, wrong_token = 1, other_protocol = 2 };

// A challenge with a fresh random nonce.
Challenge make_challenge(std::uint32_t protocol);

// The client's answer to a challenge it has checked with `read_challenge`.
Answer make_answer(const Challenge& challenge, std::uint32_t protocol, const std::string& token);

// The challenge's protocol version, or why these bytes are not a psgrad challenge.
Result<std::uint32_t> read_challenge(const Challenge& challenge);

// True while the first `size` bytes received could still begin an answer; false as soon as they
// cannot (random bytes, an HTTP request, a CAF header), so the server hangs up without waiting.
bool could_be_answer(const std::uint8_t* bytes, std::size_t size);

// The protocol version an answer claims.
std::uint32_t answer_protocol(const Answer& answer);

// The server's verdict on a complete answer to `challenge`.
Verdict judge_answer(const Challenge& challenge, const Answer& answer, std::uint32_t protocol,
                     const std::string& token);

// On the client: admitted (success), or the server's refusal in words.
Status read_verdict(const Verdict& verdict, const Answer& answer, std::uint32_t protocol, const std::string& token);

// What a refused peer sent, in a few words for the server's log: "an HTTP request", "a TLS
// handshake", "a psgrad answer with the wrong join token", "bytes that are not psgrad's".
std::string describe_opening(const std::uint8_t* bytes, std::size_t size);

}  // namespace gate
}  // namespace psgrad
