#include "attnbench/error.h"

#include <cstdio>
#include <cstdlib>

namespace attnbench {

void assertion_failed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: check `%s' failed%s%s\n", file, line, cond, msg.empty() ? "" : ": ",
               msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace attnbench
