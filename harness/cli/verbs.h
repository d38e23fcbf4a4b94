// The informational verbs: list and env.
#pragma once

#include <string>
#include <vector>

namespace attnbench::cli {

int verb_list(const std::vector<std::string>& argv);
int verb_env(const std::vector<std::string>& argv);

}  // namespace attnbench::cli
