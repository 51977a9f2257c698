# Megatron-DeepSpeed arguments for gpt3-13b on 64 GPUs of selene, from axo plan.
# Configuration 1 of the ranked table: predicted 1.2345 s per iteration.
# Tensor parallelism is axo's y (x = z = 1); ranks model-innermost, then data, pipe: axo's xyzcdp.
# Option names: microsoft/Megatron-DeepSpeed megatron/arguments.py (checked at f4157be).
# Use: deepspeed pretrain_gpt.py "${MEGATRON_DS_ARGS[@]}" ...
# Sequence parallelism's reduce-scatter overlaps the weight-gradient GEMM only when kernels
# launch in order (megatron/core/tensor_parallel/layers.py). On several nodes, also add the
# line CUDA_DEVICE_MAX_CONNECTIONS=1 to .deepspeed_env: the launcher passes on only that file's.
export CUDA_DEVICE_MAX_CONNECTIONS=1
MEGATRON_DS_ARGS=(
  --deepspeed
  --deepspeed_config ds_config.json
  --zero-stage 1
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 2
  --sequence-parallel
  --recompute-granularity selective
  --micro-batch-size 2
  --global-batch-size 1024
  --num-layers 40
  --hidden-size 5120
  --ffn-hidden-size 20480
  --num-attention-heads 40
  --seq-length 2048
  --max-position-embeddings 2048
  --attention-dropout 0.0
  --hidden-dropout 0.0
  --bf16
  --cpu-optimizer
)
