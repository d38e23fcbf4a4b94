// SIGINT and SIGTERM end a run within about a second wherever it is (docs/running.md
// "Interrupting a run"). The handler only records the signal; the run notices it between rows,
// while it waits on a worker and inside long loops (throw_if_interrupted), then writes its partial
// results and exits 128+signal. Work that cannot look (an fp64 reference being built, a kernel run
// in-process) is cut short by a watchdog: a second after the signal, unless the run has begun to
// finish (stopping()), it leaves with _exit(128+signal). Nothing is lost that way: every finished
// row is already a complete journal line, and --resume completes the run. A second signal leaves
// at once.
#pragma once

#include <stdexcept>
#include <string>

namespace attnbench {

// Installs the handlers and starts the watchdog (once; later calls do nothing).
void install_interrupt_handlers();
// 0, or the signal that interrupted the run (SIGINT, SIGTERM, or one a worker died of).
int interrupt_signal();
// Records an interruption that did not come through the handler (a worker killed by SIGTERM).
void note_interrupt(int sig);
// The run has noticed the interrupt and is writing what it has: the watchdog waits for it.
void stopping();
// What the watchdog prints before it leaves ("the journal r.json.journal keeps ...").
void set_interrupt_note(const std::string& note);

// Thrown by throw_if_interrupted(); the CLI exits 128+signal.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig) : std::runtime_error("interrupted"), signal(sig) {}
  int signal;
};
void throw_if_interrupted();

}  // namespace attnbench
