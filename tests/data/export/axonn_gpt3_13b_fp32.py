# AxoNN set-up for gpt3-13b on 16 GPUs of frontier, from axo plan.
# Configuration 1 of the ranked table: predicted 1.2345 s per iteration.
# axo -> AxoNN: x -> G_intra_c (column: splits a weight's input features),
# y -> G_intra_r (row: splits its output features), z -> G_intra_d (depth:
# shards each weight block and the batch, like FSDP), pipeline -> G_inter,
# data -> G_data. Layers built with transpose=True swap row and column, as
# axo's transposed layers (attention output, MLP down) do. AxoNN's rank order,
# column innermost, then row, depth, pipeline, data, is axo's xyzcpd; the plan's xyzcdp places its groups as xyzcpd does on 8-GPU nodes.
# Sources: axonn-ai/axonn axonn/axonn.py, axonn/communication.py,
# axonn/intra_layer/fully_connected.py, axonn/intra_layer/overlap_communication.py.
import torch
import torch.distributed as dist
from axonn import axonn as ax
from axonn.intra_layer import optimize_communication

dist.init_process_group(backend="nccl")
ax.init(G_inter=1, G_data=4, G_intra_r=4, G_intra_c=1, G_intra_d=1, gpus_per_node=8)

# Each (data, depth) rank reads global_batch / (G_data * G_intra_d) = 256 sequences
# of length 2048 per step, in microbatches of 2.
def make_loader(dataset):
    return ax.create_dataloader(dataset, global_batch_size=1024, micro_batch_size=2)

# With G_inter=1 the loader yields microbatches: accumulate gradients over 128 of them
# (train_step each), then step the optimizer.
# The plan's overlap=off sets AxoNN's three overlaps: overlap_all_reduce (dX all-reduce
# under the dW GEMM), overlap_reduce_scatter (asynchronous dW reduce-scatter) and
# overlap_all_gather (prefetched weight all-gather; only with G_intra_d > 1).
def train_step(model, batch, loss_fn):
    with optimize_communication(overlap_all_reduce=False, overlap_reduce_scatter=False,
                                overlap_all_gather=False):
        loss = loss_fn(model(batch))
        loss.backward()
    return loss
