# Megatron-LM arguments for llama3-8b on 16 GPUs of dgx-h100, from axo plan.
# Configuration 1 of the ranked table: predicted 1.2345 s per iteration.
# Megatron's tensor parallelism is axo's y (x = z = 1); ranks in Megatron's order tp-cp-ep-pp-dp (axo's xyzcpd; the plan's xyzpcd places its groups as xyzcpd does on 8-GPU nodes).
# Option names: NVIDIA/Megatron-LM megatron/training/arguments.py.
# The vocabulary (128256) comes from the tokenizer; add data, tokenizer and optimizer options.
# Use: torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" ...
# Megatron overlaps the tensor-parallel backward collective with the weight-gradient
# GEMM only when kernels launch in order (megatron/core/tensor_parallel/layers.py).
export CUDA_DEVICE_MAX_CONNECTIONS=1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 4
  --decoder-first-pipeline-num-layers 9
  --decoder-last-pipeline-num-layers 7
  --use-tp-pp-dp-mapping
  --sequence-parallel
  --recompute-granularity selective
  --micro-batch-size 1
  --global-batch-size 256
  --num-layers 32
  --hidden-size 4096
  --ffn-hidden-size 14336
  --num-attention-heads 32
  --group-query-attention
  --num-query-groups 8
  --seq-length 8192
  --max-position-embeddings 8192
  --swiglu
  --normalization RMSNorm
  --position-embedding-type rope
  --rotary-base 500000
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --attention-dropout 0.0
  --hidden-dropout 0.0
  --bf16
  --overlap-grad-reduce
  --grad-reduce-in-bf16
)
