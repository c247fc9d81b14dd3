// A child process in a process group of its own, with pipes to its standard input, output and error.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

// Splits a byte stream into lines; a last line without a newline comes out at the end.
class LineSplitter {
 public:
  std::vector<std::string> add(const char* bytes, std::size_t size);
  std::optional<std::string> rest();

 private:
  std::string partial_;
};

class ChildProcess {
 public:
  // Starts command[0] (searched on PATH when it has no '/') with command[1..]; writes `input` to its
  // standard input and keeps that open. Its own process group keeps Ctrl-C at the terminal away from it.
  static Result<ChildProcess> start(const std::vector<std::string>& command, const std::string& input);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int output_fd() const { return output_; }  // -1 once it ended
  int error_fd() const { return error_; }
  void close_output() { close_fd(output_); }
  void close_error() { close_fd(error_); }
  void close_input() { close_fd(input_); }
  void send(const std::string& text);  // to its standard input, if still open
  void signal_group(int signal) const;

  // Reaps the process if it has ended; its exit status stays available.
  bool poll_exit();
  bool running() const { return !status_; }
  bool streams_open() const { return output_ >= 0 || error_ >= 0; }
  // The exit code, or 128 + the signal that ended it (as a shell says it).
  int exit_code() const;

  LineSplitter output_lines, error_lines;

 private:
  ChildProcess(pid_t pid, int input, int output, int error) : pid_(pid), input_(input), output_(output), error_(error) {}
  static void close_fd(int& fd);

  pid_t pid_;
  int input_, output_, error_;
  std::optional<int> status_;
};

}  // namespace psgrad
