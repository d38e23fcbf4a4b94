# The attention kernels' explicit instantiations (attention_launch.h), one generated .cu file each;
# impls/cuda/CMakeLists.txt includes this file. Instances are element[:arguments]: the tile width
# (64, 128, 256: every key and value width up to it that is a multiple of 8) for prefill_mma, the
# tile width and MT (16-row MMA tiles per CTA) for decode_mma, the element alone for latent_mma
# (MLA's absorbed 576/512), the largest of head_dim and v_head_dim for general (1024: MLA's absorbed
# 576/512 and the schema's widest head). attention_stage.cpp names the instances it dispatches to.
# Head widths share their tile's instance rather than adding their own: the build's cost stays
# that of three widths (docs/cuda.md).
attnbench_cuda_instances(prefill_mma attention/prefill_mma.cuh attn
"template LaunchShape prefill_mma_shape<@targs@>();
template cudaError_t prefill_mma_configure<@targs@>(int*);
template cudaError_t prefill_mma_launch<@targs@>(const Params&, cudaStream_t);"
  f16:64 f16:128 f16:256
  bf16:64 bf16:128 bf16:256)

attnbench_cuda_instances(decode_mma attention/decode_mma.cuh attn
"template LaunchShape decode_mma_shape<@targs@>();
template cudaError_t decode_mma_configure<@targs@>(int*);
template cudaError_t decode_mma_launch<@targs@>(const Params&, int, cudaStream_t);"
  f16:64,1 f16:64,2 f16:128,1 f16:128,2 f16:256,1
  bf16:64,1 bf16:64,2 bf16:128,1 bf16:128,2 bf16:256,1)

attnbench_cuda_instances(latent_mma attention/latent_mma.cuh attn
"template LaunchShape latent_mma_shape<@targs@>();
template cudaError_t latent_mma_configure<@targs@>(int*);
template cudaError_t latent_mma_launch<@targs@>(const Params&, int, cudaStream_t);"
  f16 bf16)

attnbench_cuda_instances(general attention/general.cuh attn
"template LaunchShape general_shape<@targs@>();
template cudaError_t general_configure<@targs@>(int*);
template cudaError_t general_launch<@targs@>(const Params&, int, cudaStream_t);"
  f32:64 f32:128 f32:256 f32:512 f32:1024
  f16:64 f16:128 f16:256 f16:512 f16:1024
  bf16:64 bf16:128 bf16:256 bf16:512 bf16:1024)
