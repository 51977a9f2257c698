# AxoNN set-up for gpt3-13b on 64 GPUs of perlmutter, from axo plan.
# Configuration 1 of the ranked table: predicted 1.2345 s per iteration.
# axo -> AxoNN: x -> G_intra_c (column: splits a weight's input features),
# y -> G_intra_r (row: splits its output features), z -> G_intra_d (depth:
# shards each weight block and the batch, like FSDP), pipeline -> G_inter,
# data -> G_data. Layers built with transpose=True swap row and column, as
# axo's transposed layers (attention output, MLP down) do. AxoNN's rank order,
# column innermost, then row, depth, pipeline, data, is axo's xyzcpd; the plan's xyzpcd places its groups as xyzcpd does on 4-GPU nodes.
# Sources: axonn-ai/axonn axonn/axonn.py, axonn/communication.py,
# axonn/intra_layer/fully_connected.py, axonn/intra_layer/overlap_communication.py.
import torch
import torch.distributed as dist
from axonn import axonn as ax
from axonn.intra_layer import optimize_communication

dist.init_process_group(backend="nccl")
ax.init(G_inter=2, G_data=2, G_intra_r=2, G_intra_c=2, G_intra_d=4, gpus_per_node=4)

# Each (data, depth) rank reads global_batch / (G_data * G_intra_d) = 128 sequences
# of length 2048 per step, in microbatches of 2.
def make_loader(dataset):
    return ax.create_dataloader(dataset, global_batch_size=1024, micro_batch_size=2)

# G_inter > 1: stages run AxoNN's message-driven pipeline (axonn/inter_layer.py;
# needs mpi4py). Each pipeline rank builds its own stage: transformer layers
# [first, end) below, the embedding on the first stage, the final norm and LM
# head on the last.
# axo splits the 40 layers as 20,20.
STAGE_LAYERS = [(0, 20), (20, 40)]
first_layer, end_layer = STAGE_LAYERS[ax.config.inter_layer_parallel_rank]
# Recompute full: checkpoint every transformer block (torch.utils.checkpoint).
# Run the recomputed forward under
# axonn.intra_layer.overlap_all_gathers_for_checkpointed_forward(model).
# The plan's overlap=on sets AxoNN's three overlaps: overlap_all_reduce (dX all-reduce
# under the dW GEMM), overlap_reduce_scatter (asynchronous dW reduce-scatter) and
# overlap_all_gather (prefetched weight all-gather; only with G_intra_d > 1).
# With G_inter > 1 the loader yields the GPU's whole batch and AxoNN_Inter_Layer_Engine
# runs its microbatches through the pipeline, message-driven: forward, backward, the
# depth- and data-parallel gradient reductions and optimizer.step(). The stage module
# gives get_input_shape() and get_output_shape(), its microbatch dimension -1.
from axonn.inter_layer import AxoNN_Inter_Layer_Engine

def make_engine(stage, loss_fn):
    return AxoNN_Inter_Layer_Engine(stage, loss_fn, computation_dtype=torch.bfloat16)

def train_step(engine, batch, labels, optimizer):
    with optimize_communication(overlap_all_reduce=True, overlap_reduce_scatter=True,
                                overlap_all_gather=True, model_object_for_overlapping_allgathers=engine.model):
        return engine.forward_backward_optimizer(batch, labels, optimizer)
