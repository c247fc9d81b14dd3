#include "apps/child_process.hpp"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace psgrad {

std::vector<std::string> LineSplitter::add(const char* bytes, std::size_t size) {
  std::vector<std::string> lines;
  partial_.append(bytes, size);
  std::size_t start = 0;
  for (auto end = partial_.find('\n'); end != std::string::npos; end = partial_.find('\n', start)) {
    lines.push_back(partial_.substr(start, end - start));
    start = end + 1;
  }
  partial_.erase(0, start);
  return lines;
}

std::optional<std::string> LineSplitter::rest() {
  if (partial_.empty()) return std::nullopt;
  auto line = std::move(partial_);
  partial_.clear();
  return line;
}

Result<ChildProcess> ChildProcess::start(const std::vector<std::string>& command, const std::string& input) {
  if (command.empty()) return Error{"no command"};
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Error{fmt::format("cannot make a pipe: {}", std::strerror(errno))};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Error{fmt::format("cannot make a pipe: {}", std::strerror(errno))};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // A process group of its own, and the default signal mask and dispositions, whatever ours are.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (spawned != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    return Error{fmt::format("cannot start {}: {}", command[0], std::strerror(spawned))};
  }
  ChildProcess child(pid, in[1], out[0], err[0]);
  // A line or two fits the pipe's buffer: this never blocks. A child that exited already is told by
  // its exit code, not by this write.
  if (!input.empty() && ::write(child.input_, input.data(), input.size()) < 0) child.close_input();
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : output_lines(std::move(other.output_lines)),
      error_lines(std::move(other.error_lines)),
      pid_(other.pid_),
      input_(other.input_),
      output_(other.output_),
      error_(other.error_),
      status_(other.status_) {
  other.input_ = other.output_ = other.error_ = -1;
  other.pid_ = -1;
}

ChildProcess::~ChildProcess() {
  close_fd(input_);
  close_fd(output_);
  close_fd(error_);
}

void ChildProcess::close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void ChildProcess::send(const std::string& text) {
  if (input_ >= 0 && ::write(input_, text.data(), text.size()) < 0) close_input();
}

void ChildProcess::signal_group(int signal) const {
  if (pid_ > 0 && running()) ::kill(-pid_, signal);
}

bool ChildProcess::poll_exit() {
  if (status_) return true;
  int status = 0;
  if (pid_ <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return false;
  status_ = status;
  return true;
}

int ChildProcess::exit_code() const {
  if (!status_) return -1;
  if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
  if (WIFSIGNALED(*status_)) return 128 + WTERMSIG(*status_);
  return -1;
}

}  // namespace psgrad
