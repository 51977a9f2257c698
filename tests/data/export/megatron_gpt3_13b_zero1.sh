# Megatron-LM arguments for gpt3-13b on 96 GPUs of selene, from axo plan.
# Configuration 1 of the ranked table: predicted 1.2345 s per iteration.
# Megatron's tensor parallelism is axo's y (x = z = 1); ranks in Megatron's order tp-cp-ep-dp-pp (axo's xyzcdp).
# Option names: NVIDIA/Megatron-LM megatron/training/arguments.py.
# The vocabulary (51200) comes from the tokenizer; add data, tokenizer and optimizer options.
# Use: torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" ...
# Megatron overlaps the tensor-parallel backward collective with the weight-gradient
# GEMM only when kernels launch in order (megatron/core/tensor_parallel/layers.py).
export CUDA_DEVICE_MAX_CONNECTIONS=1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 3
  --decoder-first-pipeline-num-layers 14
  --decoder-last-pipeline-num-layers 13
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
  --overlap-grad-reduce
  --grad-reduce-in-bf16
  --use-distributed-optimizer
  --overlap-param-gather
  --optimizer-cpu-offload
  --use-precision-aware-optimizer
)
