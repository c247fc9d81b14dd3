// A child process started with posix_spawn: its streams, its process group, its signals and its end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/types.h>

#include "model/result.hpp"

namespace psgrad {

// How the child's standard streams connect to this process.
enum class ChildStreams {
  piped,         // input, output and error: a pipe each (launch reads each role's two streams apart)
  output_piped,  // output and error into one pipe, input ours (the bench reads a run's output whole)
  inherited,     // all three ours (worker processes of `train --processes` print where the server does)
};

struct ChildSpec {
  std::vector<std::string> command;  // command[0] names the program: searched on PATH when it has no '/'
  std::string executable;            // when set, the file run instead, with command as its arguments
  std::vector<std::string> environment;  // NAME=value entries that replace ours of the same name
  ChildStreams streams = ChildStreams::piped;
  bool own_process_group = true;  // keeps Ctrl-C at the terminal away from it
  // An empty signal mask and default dispositions, whatever ours are: for a parent that blocks or
  // ignores signals of its own (launch watches them on a signalfd); otherwise the child inherits them.
  bool default_signals = false;
  std::string input;  // piped only: written to its standard input at once, which stays open
};

class ChildProcess {
 public:
  static Result<ChildProcess> start(const ChildSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // closes our ends of its pipes; a child still running is left alone

  pid_t pid() const { return pid_; }
  int output_fd() const { return output_; }  // -1 when not piped or once closed
  int error_fd() const { return error_; }
  void close_output() { close_fd(output_); }
  void close_error() { close_fd(error_); }
  void close_input() { close_fd(input_); }
  void send(const std::string& text);  // to its standard input, if still open
  void signal(int signal) const;        // to the child alone
  void signal_group(int signal) const;  // to its process group: what it started too

  // Reaps the process if it has ended; its exit status stays available.
  bool poll_exit();
  // Whether it has ended, leaving it unreaped so that wait() still gets its resource usage.
  bool has_exited() const;
  // How it ended ("exited with code 1", "killed by SIGKILL"), leaving it unreaped; nothing while it runs.
  std::optional<std::string> how_it_ended() const;
  // Waits for it to end and reaps it; `usage` receives what wait4 reports (peak memory, CPU time).
  void wait(rusage* usage = nullptr);
  bool running() const { return !status_; }
  bool streams_open() const { return output_ >= 0 || error_ >= 0; }
  // The exit code, or 128 + the signal that ended it (as a shell says it); -1 while it runs.
  int exit_code() const;
  // The signal that ended it, else 0.
  int end_signal() const;

 private:
  ChildProcess(pid_t pid, int input, int output, int error) : pid_(pid), input_(input), output_(output), error_(error) {}
  static void close_fd(int& fd);

  pid_t pid_;
  int input_, output_, error_;
  std::optional<int> status_;
};

}  // namespace psgrad
