// posix_spawn rather than fork: nothing runs between the two in a copy of a process with many threads
// (an actor system's), where only async-signal-safe calls would be allowed.
#include "apps/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace psgrad {

namespace {

// Both ends of a pipe, each closed when it goes unless it was taken. O_CLOEXEC keeps them out of
// every child but the one whose standard stream they become (dup2 clears the flag on the copy).
struct Pipe {
  int read_end = -1;
  int write_end = -1;

  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_end(read_end);
    close_end(write_end);
  }

  bool open() {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return false;
    read_end = ends[0];
    write_end = ends[1];
    return true;
  }
  static int take(int& end) {
    const int fd = end;
    end = -1;
    return fd;
  }
  static void close_end(int& end) {
    if (end >= 0) ::close(end);
    end = -1;
  }
};

bool same_name(const char* variable, const std::string& entry) {
  const auto name_length = entry.find('=');
  return std::strncmp(variable, entry.c_str(), name_length) == 0 && variable[name_length] == '=';
}

// Our environment with `changes` in place of the variables they name. Points into both: they must
// outlive the spawn.
std::vector<char*> environment_with(const std::vector<std::string>& changes) {
  std::vector<char*> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    bool replaced = false;
    for (const auto& change : changes) replaced = replaced || same_name(*variable, change);
    if (!replaced) environment.push_back(*variable);
  }
  for (const auto& change : changes) environment.push_back(const_cast<char*>(change.c_str()));
  environment.push_back(nullptr);
  return environment;
}

}  // namespace

Result<ChildProcess> ChildProcess::start(const ChildSpec& spec) {
  if (spec.command.empty()) return Error{"no command"};
  const bool piped = spec.streams == ChildStreams::piped;
  const bool output_piped = spec.streams != ChildStreams::inherited;
  Pipe input, output, error;
  if ((piped && !input.open()) || (output_piped && !output.open()) || (piped && !error.open()))
    return Error{fmt::format("cannot make a pipe: {}", std::strerror(errno))};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (piped) posix_spawn_file_actions_adddup2(&actions, input.read_end, STDIN_FILENO);
  if (output_piped) {
    posix_spawn_file_actions_adddup2(&actions, output.write_end, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, piped ? error.write_end : output.write_end, STDERR_FILENO);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  short flags = 0;
  if (spec.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  if (spec.default_signals) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  }
  posix_spawnattr_setflags(&attributes, flags);
  std::vector<char*> argv;
  for (const auto& word : spec.command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  auto environment = spec.environment.empty() ? std::vector<char*>() : environment_with(spec.environment);
  const char* program = spec.executable.empty() ? argv[0] : spec.executable.c_str();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, program, &actions, &attributes, argv.data(),
                                   environment.empty() ? environ : environment.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) return Error{fmt::format("cannot start {}: {}", spec.command[0], std::strerror(spawned))};

  // The child's ends close as the pipes go; ours pass to the child process.
  ChildProcess child(pid, Pipe::take(input.write_end), Pipe::take(output.read_end), Pipe::take(error.read_end));
  // A line or two fits the pipe's buffer: this never blocks. A child that exited already is told by
  // its exit code, not by this write.
  if (!spec.input.empty()) child.send(spec.input);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), input_(other.input_), output_(other.output_), error_(other.error_), status_(other.status_) {
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

void ChildProcess::signal(int signal) const {
  if (pid_ > 0 && running()) ::kill(pid_, signal);
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

bool ChildProcess::has_exited() const {
  if (status_) return true;
  siginfo_t info{};
  return pid_ > 0 && waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

std::optional<std::string> ChildProcess::how_it_ended() const {
  int signal = 0;
  if (status_) {
    if (!WIFSIGNALED(*status_)) return fmt::format("exited with code {}", WEXITSTATUS(*status_));
    signal = WTERMSIG(*status_);
  } else {
    siginfo_t info{};
    if (pid_ <= 0 || waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != pid_)
      return std::nullopt;
    if (info.si_code == CLD_EXITED) return fmt::format("exited with code {}", info.si_status);
    signal = info.si_status;
  }
  const char* name = sigabbrev_np(signal);
  return name ? fmt::format("was killed by SIG{}", name) : fmt::format("was killed by signal {}", signal);
}

void ChildProcess::wait(rusage* usage) {
  if (status_ || pid_ <= 0) return;
  int status = 0;
  rusage ignored{};
  pid_t reaped = 0;
  while ((reaped = wait4(pid_, &status, 0, usage ? usage : &ignored)) < 0 && errno == EINTR) {
  }
  if (reaped == pid_) status_ = status;
}

int ChildProcess::exit_code() const {
  if (!status_) return -1;
  if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
  if (WIFSIGNALED(*status_)) return 128 + WTERMSIG(*status_);
  return -1;
}

int ChildProcess::end_signal() const { return status_ && WIFSIGNALED(*status_) ? WTERMSIG(*status_) : 0; }

}  // namespace psgrad
