// The plan fields of tree_verify_walk.comp's push block (after TreeVerifyParams): one field list
// that glslc and the host (decoding/tree_verify_vulkan.cpp) both read, as a plan header does. A
// dispatch walks rows [row0, row_end), one scratch slot a row, so the scratch holds one tile of rows.
#ifndef ATTNBENCH_TREE_VERIFY_WALK_PLAN_GLSL
#define ATTNBENCH_TREE_VERIFY_WALK_PLAN_GLSL

#define ATTNBENCH_TREE_VERIFY_WALK_PLAN(X)                          \
  X(u32, row0)    /* the dispatch's first row (scratch slot 0) */   \
  X(u32, row_end) /* one past its last row */                       \
  X(u32, groups)  /* the dispatch's workgroups */

#endif
