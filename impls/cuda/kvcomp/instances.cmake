# The SnapKV scorer's logits kernels (snapkv_launch.h), one generated .cu file per element type;
# impls/cuda/CMakeLists.txt includes this file; snapkv_scorer_cuda.h names the instances it dispatches to.
attnbench_cuda_instances(snapkv_logits kvcomp/snapkv_logits.cuh snapkv
"template cudaError_t logits_configure<@targs@>(int*, int*);
template cudaError_t stats_launch<@targs@>(const Params&, cudaStream_t);
template cudaError_t scores_launch<@targs@>(const Params&, cudaStream_t);"
  f32 f16 bf16)
