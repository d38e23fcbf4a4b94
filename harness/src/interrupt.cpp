#include "attnbench/interrupt.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

namespace attnbench {

namespace {

constexpr double kGraceSeconds = 1.0;     // to notice the signal
constexpr double kFinishSeconds = 20.0;   // to write the partial results once noticed

std::atomic<int> g_signal{0};
std::atomic<bool> g_stopping{false};
int g_pipe[2] = {-1, -1};
std::mutex g_note_mutex;
std::string g_note;

void on_signal(int sig) {
  if (g_signal.load() != 0) _exit(128 + g_signal.load());  // a second signal: leave now
  g_signal.store(sig);
  const char b = 1;
  [[maybe_unused]] const ssize_t n = write(g_pipe[1], &b, 1);
}

void leave(int sig, const char* why) {
  std::string note;
  {
    std::lock_guard<std::mutex> lock(g_note_mutex);
    note = g_note;
  }
  std::fprintf(stderr, "attnbench: interrupted (signal %d) %s%s%s\n", sig, why, note.empty() ? "" : "; ", note.c_str());
  std::fflush(stderr);
  _exit(128 + sig);
}

void watchdog() {
  char b;
  while (read(g_pipe[0], &b, 1) < 0) {
  }
  const int sig = g_signal.load();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kGraceSeconds);
  while (!g_stopping.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!g_stopping.load()) leave(sig, "while busy");
  std::this_thread::sleep_for(std::chrono::duration<double>(kFinishSeconds));  // the run exits before this ends
  leave(sig, "and could not finish writing its results in time");
}

}  // namespace

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe(g_pipe) != 0) return;  // no watchdog: the cooperative checks still work
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking poll returns EINTR
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a dead worker shows as EOF, not a dead parent
    std::thread(watchdog).detach();
  });
}

int interrupt_signal() { return g_signal.load(); }

void note_interrupt(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
}

void stopping() { g_stopping.store(true); }

void set_interrupt_note(const std::string& note) {
  std::lock_guard<std::mutex> lock(g_note_mutex);
  g_note = note;
}

void throw_if_interrupted() {
  if (const int sig = g_signal.load()) throw Interrupted(sig);
}

}  // namespace attnbench
