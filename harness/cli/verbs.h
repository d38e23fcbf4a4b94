// The verbs other than run and check: list, env (verbs.cpp; list --markdown's page in
// method_catalog.cpp), compare, merge (compare_verbs.cpp), dump (verb_dump.cpp) and leaderboard
// (verb_leaderboard.cpp).
#pragma once

#include <string>
#include <vector>

namespace attnbench::cli {

int verb_list(const std::vector<std::string>& argv);
int verb_env(const std::vector<std::string>& argv);
int verb_compare(const std::vector<std::string>& argv);
int verb_merge(const std::vector<std::string>& argv);
int verb_dump(const std::vector<std::string>& argv);
int verb_leaderboard(const std::vector<std::string>& argv);

// The method catalog in Markdown, from the registry (docs/methods.md is this text).
std::string method_catalog_markdown();

}  // namespace attnbench::cli
