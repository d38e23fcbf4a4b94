// The method spec shared by mha, mqa, gqa and swa; each has its own file with its registration line.
#pragma once

#include "attention_common.h"
#include "attnbench/method.h"

namespace attnbench::attention {

enum class HeadSharing { per_head /* mha */, single /* mqa */, grouped /* gqa */ };

class AttentionSpec : public Method {
 public:
  // sliding: the method takes window and sinks (swa); every attention method takes softcap and alibi.
  AttentionSpec(MethodInfo info, HeadSharing sharing, bool sliding = false);

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }
  std::vector<OutputDecl> outputs(const Case& c) const override;
  TensorMap inputs(const Case& c) const override;
  Reference reference(const Case& c, const TensorMap& inputs) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& inputs, const TensorMap& outputs) const override;
  std::optional<RelatedCase> baseline(const Case& c) const override;

  HeadSharing sharing() const { return sharing_; }
  bool sliding() const { return sliding_; }

 private:
  MethodInfo info_;
  HeadSharing sharing_;
  bool sliding_;
  ParamSchema schema_;
};

// Above this many reference flops the check compares a seeded sample of query rows.
inline constexpr double kFullReferenceFlops = 4e9;

}  // namespace attnbench::attention
