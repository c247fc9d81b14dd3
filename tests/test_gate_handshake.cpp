// The gate's challenge/response: the right token is admitted both ways, anything else is refused.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "transport/gate_handshake.hpp"

using namespace psgrad;

TEST_CASE("the gate admits an answer made with the same token, and the client accepts the server's proof") {
  const auto challenge = gate::make_challenge(4);
  REQUIRE(gate::read_challenge(challenge).ok());
  CHECK(gate::read_challenge(challenge).value() == 4);
  const auto answer = gate::make_answer(challenge, 4, "s3cret");
  CHECK(gate::could_be_answer(answer.data(), answer.size()));
  const auto verdict = gate::judge_answer(challenge, answer, 4, "s3cret");
  CHECK(verdict[0] == static_cast<std::uint8_t>(gate::VerdictCode::admitted));
  CHECK(gate::read_verdict(verdict, answer, 4, "s3cret").ok());
}

TEST_CASE("the gate admits no token only when neither side has one") {
  const auto challenge = gate::make_challenge(4);
  const auto answer = gate::make_answer(challenge, 4, "");
  CHECK(gate::read_verdict(gate::judge_answer(challenge, answer, 4, ""), answer, 4, "").ok());
  CHECK(gate::judge_answer(challenge, gate::make_answer(challenge, 4, "x"), 4, "")[0] ==
        static_cast<std::uint8_t>(gate::VerdictCode::wrong_token));
}

TEST_CASE("a wrong token, an answer to another challenge, or another protocol is refused in words") {
  const auto challenge = gate::make_challenge(4);
  const auto wrong = gate::make_answer(challenge, 4, "guess");
  const auto verdict = gate::judge_answer(challenge, wrong, 4, "s3cret");
  CHECK(gate::read_verdict(verdict, wrong, 4, "guess").error() == "wrong join token");
  // A recorded answer does not open a later connection: every challenge has its own nonce.
  const auto replayed = gate::make_answer(challenge, 4, "s3cret");
  CHECK(gate::judge_answer(gate::make_challenge(4), replayed, 4, "s3cret")[0] ==
        static_cast<std::uint8_t>(gate::VerdictCode::wrong_token));
  const auto older = gate::make_answer(challenge, 3, "s3cret");
  const auto refused = gate::judge_answer(challenge, older, 4, "s3cret");
  CHECK(gate::read_verdict(refused, older, 3, "s3cret").error() ==
        "protocol version 3 does not match the server's 4");
}

TEST_CASE("a server that admits without proving the token is not trusted") {
  const auto challenge = gate::make_challenge(4);
  const auto answer = gate::make_answer(challenge, 4, "s3cret");
  auto forged = gate::judge_answer(challenge, answer, 4, "other");
  forged[0] = static_cast<std::uint8_t>(gate::VerdictCode::admitted);
  CHECK_FALSE(gate::read_verdict(forged, answer, 4, "s3cret").ok());
}

TEST_CASE("anything that cannot begin an answer is known at its first bytes, and named") {
  const std::string http = "GET / HTTP/1.1\r\n";
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(http.data());
  CHECK_FALSE(gate::could_be_answer(bytes, 1));
  CHECK(gate::describe_opening(bytes, http.size()) == "an HTTP request");
  const std::uint8_t basp_header[8] = {0x01, 0, 0, 0, 0xff, 0xff, 0xff, 0xf0};
  CHECK_FALSE(gate::could_be_answer(basp_header, sizeof basp_header));
  const std::uint8_t tls_hello[3] = {0x16, 0x03, 0x01};
  CHECK(gate::describe_opening(tls_hello, 3) == "a TLS handshake (this server is in plain mode)");
  const std::string start = "psgr";
  CHECK(gate::could_be_answer(reinterpret_cast<const std::uint8_t*>(start.data()), start.size()));
  gate::Challenge not_psgrad{};
  std::memcpy(not_psgrad.data(), "HTTP/1.1", 8);
  CHECK_FALSE(gate::read_challenge(not_psgrad).ok());
}
