// tree_verify's distribution test (the stochastic modes' STAT, semantics in tree_verify.cpp), shared
// by its check, its quality figures and the power twins in tests.
#pragma once

#include <vector>

#include "attnbench/check_stat.h"
#include "attnbench/method.h"

namespace attnbench::decoding {

// One chi-square per node u: the token emitted right after u, among the rows whose accepted_nodes
// hold u, against p̄_u. A row naming a node or token outside the tree or vocabulary fails outright.
std::vector<GofResult> tree_node_tests(const Case& c, const TensorMap& inputs, const TensorMap& outputs);

}  // namespace attnbench::decoding
