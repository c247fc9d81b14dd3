// The launch's loop: one poll over every role's output, a signalfd for Ctrl-C and for children that
// ended, and deadlines for roles slow to stop.
#include "apps/launch_run.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "apps/child_process.hpp"
#include "apps/error_exit.hpp"
#include "apps/line_splitter.hpp"
#include "apps/port_file.hpp"
#include "launch/joined_worker.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

// How long the others may take to end after the server did, and after being told to stop.
constexpr auto others_after_server = std::chrono::seconds(15);
constexpr auto after_stop_request = std::chrono::seconds(10);
constexpr auto before_kill = std::chrono::seconds(5);

// `reached`: the role printed a line of its own, so ssh did connect.
std::string exit_words(const Role& role, int code, bool reached) {
  if (!role.local && code == 255 && !reached)
    return fmt::format("exit 255: ssh could not connect to or log in to {}", role.host);
  if (!role.local && code == 255)
    return "exit 255: the ssh connection dropped, or the process there was ended by a signal";
  if (code == 127) return "exit 127: the psgrad binary or a shell command was not found there";
  if (code > 128) return fmt::format("exit {}: ended by signal {}", code, code - 128);
  return fmt::format("exit {}", code);
}

struct RunningRole {
  Role role;
  std::string label;   // role.label(), then "worker K" once the server made it worker K
  std::string prefix;  // "[host label] "
  std::optional<ChildProcess> process;
  LineSplitter output_lines, error_lines;
  bool reported = false;
  bool reached = false;  // it printed a psgrad line: the process did start there
};

class Launch {
 public:
  // `port_file`: where a server on this machine writes its address; empty when it gives it on its
  // standard output instead (over ssh).
  Launch(LaunchPlan plan, LaunchSettings settings, std::string token, std::string port_file)
      : plan_(std::move(plan)), settings_(std::move(settings)), token_(std::move(token)),
        port_file_(std::move(port_file)) {
    for (const auto& role : plan_.roles) {
      roles_.emplace_back();
      roles_.back().role = role;
      roles_.back().label = role.label();
      roles_.back().prefix = fmt::format("[{} {}] ", role.host, role.label());
    }
  }

  int run();

 private:
  void start(RunningRole& launched, std::uint16_t port);
  void start_others(std::uint16_t port);
  void check_port_file();
  void read_stream(RunningRole& launched, bool errors);
  void handle_line(RunningRole& launched, bool errors, const std::string& line);
  void check_exits();
  void on_signal(int signal);
  void request_stop();
  void stop_all_now();
  void check_deadlines();
  bool anything_running() const;
  void say(const std::string& line) {
    fmt::print(stderr, "psgrad launch: {}\n", cut_long_words(line));
    std::fflush(stderr);
  }

  LaunchPlan plan_;
  LaunchSettings settings_;
  std::string token_;
  std::string port_file_;
  std::vector<RunningRole> roles_;
  // Where the launch stands; a stop request can come in any phase and ends it.
  enum class Phase { waiting_for_server, starting_workers, training, stopping };
  Phase phase_ = Phase::waiting_for_server;
  int interrupted_ = 0;
  int failures_ = 0;
  std::optional<Clock::time_point> close_inputs_at_, kill_at_;
};

void Launch::start(RunningRole& launched, std::uint16_t port) {
  ChildSpec spec;
  spec.command = role_command(launched.role, plan_, settings_, port);
  spec.streams = ChildStreams::piped;
  // Its own process group keeps Ctrl-C at the terminal away from it: the launch stops the roles in order.
  spec.own_process_group = true;
  // The launch blocks the signals it watches and ignores SIGPIPE: the roles must not inherit either.
  spec.default_signals = true;
  spec.input = token_ + "\n";
  auto child = ChildProcess::start(spec);
  if (!child) {
    say(fmt::format("{} on {}: {}", launched.label, launched.role.host, child.error()));
    launched.reported = true;
    ++failures_;
    return;
  }
  launched.process.emplace(std::move(*child));
}

void Launch::start_others(std::uint16_t port) {
  if (phase_ != Phase::waiting_for_server) return;
  phase_ = Phase::starting_workers;
  for (auto& other : roles_)
    if (other.role.kind != RoleKind::server) start(other, port);
  if (failures_ > 0) stop_all_now();
}

// A server on this machine has listened once its port file is there (written whole, or not at all).
void Launch::check_port_file() {
  if (phase_ != Phase::waiting_for_server || port_file_.empty()) return;
  const auto address = read_port_file(port_file_);
  if (address && !*address) return;
  if (address) return start_others((*address)->port);
  const auto& server = roles_.front();
  say(fmt::format("{} on {}: {}", server.role.label(), server.role.host, address.error()));
  ++failures_;
  stop_all_now();
}

void Launch::handle_line(RunningRole& launched, bool errors, const std::string& line) {
  if (line.empty()) return;  // a signal's message starts with one; prefixed, it is only noise
  if (line.rfind("psgrad", 0) == 0 || !errors) launched.reached = true;
  const bool server = launched.role.kind == RoleKind::server;
  // From its joined line on, a worker goes by the number the server gave it (a rejoin may change it).
  if (launched.role.kind == RoleKind::worker && errors) {
    if (const auto index = joined_worker_index(line)) {
      launched.label = fmt::format("worker {}", *index);
      launched.prefix = fmt::format("[{} {}] ", launched.role.host, launched.label);
    }
  }
  // A server over ssh gives its address as a line of its standard output (serve --port-file -):
  // that line is for the launch, not for people.
  if (server && !errors && phase_ == Phase::waiting_for_server && port_file_.empty()) {
    if (const auto address = parse_served_address(line)) return start_others(address->port);
  }
  fmt::print(errors ? stderr : stdout, "{}{}\n", launched.prefix, line);
  std::fflush(errors ? stderr : stdout);
  if (server && !errors && phase_ == Phase::starting_workers && line.find("\taccuracy") != std::string::npos)
    phase_ = Phase::training;
}

void Launch::read_stream(RunningRole& launched, bool errors) {
  auto& process = *launched.process;
  char buffer[65536];
  const int fd = errors ? process.error_fd() : process.output_fd();
  const auto n = ::read(fd, buffer, sizeof buffer);
  if (n < 0 && errno == EINTR) return;
  auto& splitter = errors ? launched.error_lines : launched.output_lines;
  if (n <= 0) {
    if (auto rest = splitter.rest()) handle_line(launched, errors, *rest);
    errors ? process.close_error() : process.close_output();
    return;
  }
  for (const auto& line : splitter.add(buffer, static_cast<std::size_t>(n))) handle_line(launched, errors, line);
}

void Launch::request_stop() {
  if (phase_ == Phase::stopping) return;
  phase_ = Phase::stopping;
  // The server first: it saves the run and stops the workers and shards; the rest follow if they must.
  if (roles_.front().process) roles_.front().process->close_input();
  close_inputs_at_ = Clock::now() + after_stop_request;
}

// Every role at once: each gets "stop now" and the end of its input (ssh carries both).
void Launch::stop_all_now() {
  phase_ = Phase::stopping;
  for (auto& launched : roles_)
    if (launched.process && launched.process->running()) {
      launched.process->send("stop now\n");
      launched.process->close_input();
    }
  close_inputs_at_.reset();
  if (!kill_at_) kill_at_ = Clock::now() + before_kill;
}

void Launch::on_signal(int signal) {
  const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  if (interrupted_ == 0) {
    interrupted_ = signal;
    say(fmt::format("{}: stopping every role; the server saves the run first (again to stop at once)", name));
    request_stop();
    return;
  }
  say(fmt::format("{}: stopping every role now", name));
  stop_all_now();
}

void Launch::check_exits() {
  for (auto& launched : roles_) {
    if (!launched.process || launched.reported) continue;
    auto& process = *launched.process;
    // Report an end once its output is all out, so the reason comes after the role's last lines.
    if (process.streams_open() || !process.poll_exit()) continue;
    launched.reported = true;
    process.close_input();
    const int code = process.exit_code();
    const bool server = launched.role.kind == RoleKind::server;
    const bool interrupted_server = server && interrupted_ && (code == 128 + SIGINT || code == 128 + SIGTERM);
    if (code != 0 && !interrupted_server) {
      ++failures_;
      say(fmt::format("{} on {} failed ({})", launched.label, launched.role.host,
                      exit_words(launched.role, code, launched.reached)));
      if (!server && (phase_ == Phase::waiting_for_server || phase_ == Phase::starting_workers)) {
        say("a role failed before training began: stopping the run");
        stop_all_now();
      }
    }
    if (server && anything_running()) {
      const auto at = Clock::now() + (phase_ == Phase::stopping ? std::chrono::seconds(2) : others_after_server);
      if (!close_inputs_at_ || *close_inputs_at_ > at) close_inputs_at_ = at;
    }
  }
}

void Launch::check_deadlines() {
  const auto now = Clock::now();
  if (close_inputs_at_ && now >= *close_inputs_at_) {
    close_inputs_at_.reset();
    for (auto& launched : roles_)
      if (launched.process && launched.process->running()) launched.process->close_input();
    if (!kill_at_) kill_at_ = now + before_kill;
  }
  if (kill_at_ && now >= *kill_at_) {
    kill_at_.reset();
    for (auto& launched : roles_)
      if (launched.process && launched.process->running()) {
        say(fmt::format("{} on {} did not stop: killing it", launched.label, launched.role.host));
        launched.process->signal_group(SIGKILL);
      }
  }
}

bool Launch::anything_running() const {
  for (const auto& launched : roles_)
    if (launched.process && !launched.reported) return true;
  return false;
}

int Launch::run() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a role that ended must not end us when we close or write its input
  const int signals = signalfd(-1, &set, SFD_CLOEXEC);
  if (signals < 0) {
    say("cannot watch signals");
    return 1;
  }
  start(roles_.front(), 0);
  while (anything_running()) {
    std::vector<pollfd> fds{{signals, POLLIN, 0}};
    std::vector<std::pair<RunningRole*, bool>> owners{{nullptr, false}};
    for (auto& launched : roles_) {
      if (!launched.process) continue;
      if (launched.process->output_fd() >= 0) {
        fds.push_back({launched.process->output_fd(), POLLIN, 0});
        owners.emplace_back(&launched, false);
      }
      if (launched.process->error_fd() >= 0) {
        fds.push_back({launched.process->error_fd(), POLLIN, 0});
        owners.emplace_back(&launched, true);
      }
    }
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(signals, &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD)
        on_signal(static_cast<int>(info.ssi_signo));
    }
    for (std::size_t k = 1; k < fds.size(); ++k)
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) read_stream(*owners[k].first, owners[k].second);
    check_port_file();
    check_exits();
    check_deadlines();
  }
  ::close(signals);
  if (interrupted_) return 128 + interrupted_;
  if (failures_ > 0) {
    say(fmt::format("{} role(s) failed", failures_));
    return 1;
  }
  return 0;
}

}  // namespace

std::string port_folder_template() {
  std::error_code error;
  auto folder = std::filesystem::temp_directory_path(error);
  if (error) folder = "/tmp";
  return (folder / "psgrad-launch-XXXXXX").string();
}

std::string server_port_file(const LaunchPlan& plan, const std::string& folder) {
  return plan.roles.front().local ? folder + "/server.json" : "-";
}

int run_launch(LaunchPlan plan, LaunchSettings settings, std::string token) {
  // Only this user can enter it (mkdtemp makes it 0700): nobody else can put an address there.
  std::string folder;
  if (plan.roles.front().local) {
    folder = port_folder_template();
    if (!mkdtemp(folder.data()))
      return ErrorExit{"psgrad launch"}.failed(
          fmt::format("cannot make a folder for the server's port file ({}): {}", folder, std::strerror(errno)));
  }
  settings.server_port_file = server_port_file(plan, folder);
  const auto port_file = plan.roles.front().local ? settings.server_port_file : std::string();
  const int code = Launch(std::move(plan), std::move(settings), std::move(token), port_file).run();
  if (!folder.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  }
  return code;
}

}  // namespace psgrad
