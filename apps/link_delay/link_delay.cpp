// psgrad-link-delay: holds every packet an iptables NFQUEUE rule hands it for a fixed time, then lets
// it go. The cluster simulator's --delay on kernels without sch_netem (netem is the usual way).

#include <fcntl.h>
// netinet/in.h before linux/netfilter.h: the kernel's header then leaves glibc's definitions alone.
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "apps/link_delay/delay_line.hpp"

namespace {

using psgrad::DelayLine;
using psgrad::LinkClock;

int fail(const std::string& message) {
  std::fprintf(stderr, "psgrad-link-delay: %s\n", message.c_str());
  return 1;
}

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* packet, void* line) {
  if (const auto* header = nfq_get_msg_packet_hdr(packet))
    static_cast<DelayLine*>(line)->arrived(ntohl(header->packet_id), LinkClock::now());
  return 0;
}

volatile std::sig_atomic_t stop_requested = 0;
void request_stop(int) { stop_requested = 1; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"psgrad-link-delay: delays every packet that an iptables NFQUEUE rule sends to its queue",
               "psgrad-link-delay"};
  std::string delay_text;
  unsigned queue_number = 0;
  std::string ready_file;
  app.add_option("--delay", delay_text, "how long each packet waits: 1ms, 500us, 0.5ms")->required();
  app.add_option("--queue", queue_number, "the NFQUEUE number the iptables rule names")
      ->check(CLI::Range(0u, 65535u));
  app.add_option("--ready-file", ready_file, "written once the queue is bound, so a script can wait for it");
  CLI11_PARSE(app, argc, argv);

  const auto delay = psgrad::parse_link_delay(delay_text);
  if (!delay) return fail(delay.error());

  // SIGTERM and SIGINT reach the loop only inside ppoll, so a stop is never missed between a check
  // and the wait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigset_t waiting_mask;
  sigprocmask(SIG_BLOCK, &stop_signals, &waiting_mask);
  sigdelset(&waiting_mask, SIGTERM);
  sigdelset(&waiting_mask, SIGINT);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  // A sleeping thread is woken up to 50 µs late by default: too coarse for a delay of 100 µs.
  prctl(PR_SET_TIMERSLACK, 1UL);

  nfq_handle* handle = nfq_open();
  if (!handle) return fail("could not open a netfilter queue socket (needs root and a kernel with NFQUEUE)");
  DelayLine line(*delay);
  nfq_q_handle* queue = nfq_create_queue(handle, static_cast<std::uint16_t>(queue_number), &on_packet, &line);
  if (!queue) {
    nfq_close(handle);
    return fail("could not bind queue " + std::to_string(queue_number) + " (another process holds it?)");
  }
  // Only the ids are needed, not the bytes: without a copy mode the kernel queues nothing to us, so
  // that one must succeed. The flags only make the delay cheaper or kinder under load: GSO segments stay
  // whole (the veths pass 64 KiB ones), and when the kernel's queue is full a packet passes undelayed
  // rather than being dropped.
  if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0) {
    nfq_destroy_queue(queue);
    nfq_close(handle);
    return fail("could not set queue " + std::to_string(queue_number) + " to pass packet metadata");
  }
  nfq_set_queue_maxlen(queue, 65536);
  if (nfq_set_queue_flags(queue, NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN) < 0)
    std::fprintf(stderr, "psgrad-link-delay: this kernel segments large packets for the queue (no GSO flag)\n");
  nfnl_rcvbufsiz(nfq_nfnlh(handle), 8u << 20);
  const int descriptor = nfq_fd(handle);
  fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK);

  if (!ready_file.empty() && !(std::ofstream(ready_file) << "ready\n"))
    return fail("could not write " + ready_file);

  alignas(8) std::array<char, 1 << 16> buffer{};
  while (!stop_requested) {
    timespec timeout{};
    timespec* wait = nullptr;  // nothing waits: sleep until a packet comes
    if (const auto due = line.next_due()) {
      const auto left = std::max(LinkClock::duration::zero(), *due - LinkClock::now());
      const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timeout.tv_sec = static_cast<time_t>(nanoseconds / 1'000'000'000);
      timeout.tv_nsec = static_cast<long>(nanoseconds % 1'000'000'000);
      wait = &timeout;
    }
    pollfd readable{descriptor, POLLIN, 0};
    if (ppoll(&readable, 1, wait, &waiting_mask) < 0 && errno != EINTR) return fail(std::strerror(errno));
    for (;;) {
      const auto received = recv(descriptor, buffer.data(), buffer.size(), 0);
      if (received > 0) {
        nfq_handle_packet(handle, buffer.data(), static_cast<int>(received));
        continue;
      }
      // ENOBUFS: the kernel dropped notices of some packets. They are not lost: a batch verdict
      // releases every older id, so they leave with the next batch.
      if (received < 0 && errno == ENOBUFS) continue;
      break;
    }
    if (const auto newest_due = line.take_due(LinkClock::now()))
      nfq_set_verdict_batch(queue, *newest_due, NF_ACCEPT);
  }
  // Packets still held would be dropped with the queue: let them go first.
  if (const auto newest = line.take_due(LinkClock::time_point::max()))
    nfq_set_verdict_batch(queue, *newest, NF_ACCEPT);
  nfq_destroy_queue(queue);
  nfq_close(handle);
  return 0;
}
