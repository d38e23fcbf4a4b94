# The SnapKV scorer's logits kernels (snapkv_launch.h), one generated .cu file per element type;
# impls/cuda/CMakeLists.txt includes this file; snapkv_scorer_cuda.h names the instances it dispatches to.
attnbench_cuda_instances(snapkv_logits kvcomp/snapkv_logits.cuh snapkv
"template cudaError_t logits_configure<@targs@>(int*, int*);
template cudaError_t stats_launch<@targs@>(const Params&, cudaStream_t);
template cudaError_t scores_launch<@targs@>(const Params&, cudaStream_t);"
  f32 f16 bf16)
# kivi_decode's fused decode kernel (kivi_decode_launch.h), one generated .cu file per element type
# and code width; kivi_decode_cuda.cpp dispatches to them, kivi_decode.cu holds the split combine.
attnbench_cuda_instances(kivi_decode kvcomp/kivi_decode.cuh kivi
"template cudaError_t decode_configure<@targs@>(int, int*);
template cudaError_t decode_launch<@targs@>(const Args&, cudaStream_t);"
  f16:2 f16:4 bf16:2 bf16:4)
