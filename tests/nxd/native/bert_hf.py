"""The native target of legacy/bert_hf.py, written by hand (DTensor TP, FSDP2).

The pattern of the NxD BERT pretraining sample: subclass the Hugging Face modules, replace their
linears with ColumnParallelLinear / RowParallelLinear, divide the head count by the TP size, and
swap the new modules into the model after it is built.
"""

import os

import parallel_mesh
import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from transformers import BertConfig, BertForSequenceClassification
from transformers.models.bert.modeling_bert import (
    BertIntermediate,
    BertOutput,
    BertSelfAttention,
    BertSelfOutput,
)

BATCH, SEQ, STEPS = 8, 12, 5
CONFIG = BertConfig(
    vocab_size=64,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
    num_labels=3,
)


class ParallelSelfAttention(BertSelfAttention):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.query = parallelize_module(
            torch.nn.Linear(config.hidden_size, self.all_head_size),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(),
        )
        self.key = parallelize_module(
            torch.nn.Linear(config.hidden_size, self.all_head_size),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(),
        )
        self.value = parallelize_module(
            torch.nn.Linear(config.hidden_size, self.all_head_size),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(),
        )
        self.num_attention_heads = self.num_attention_heads // parallel_mesh.tp_mesh().size()
        self.all_head_size = self.all_head_size // parallel_mesh.tp_mesh().size()


class ParallelSelfOutput(BertSelfOutput):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = parallelize_module(
            torch.nn.Linear(config.hidden_size, config.hidden_size),
            parallel_mesh.tp_mesh(),
            RowwiseParallel(),
        )


class ParallelIntermediate(BertIntermediate):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = parallelize_module(
            torch.nn.Linear(config.hidden_size, config.intermediate_size),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(),
        )


class ParallelOutput(BertOutput):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = parallelize_module(
            torch.nn.Linear(config.intermediate_size, config.hidden_size),
            parallel_mesh.tp_mesh(),
            RowwiseParallel(),
        )


def get_model() -> BertForSequenceClassification:
    model = BertForSequenceClassification(CONFIG)
    # swap the NxD layers into the built model
    for layer in model.bert.encoder.layer:
        layer.attention.self = ParallelSelfAttention(CONFIG)
        layer.attention.output = ParallelSelfOutput(CONFIG)
        layer.intermediate = ParallelIntermediate(CONFIG)
        layer.output = ParallelOutput(CONFIG)
    return model


def main() -> None:
    dist.init_process_group("gloo")
    config = parallel_mesh.training_config(
        "cpu", tensor_parallel_size=int(os.environ.get("TP", "1"))
    )
    torch.manual_seed(0)
    model = fully_shard(get_model(), mesh=parallel_mesh.dp_mesh())
    optimizer = parallel_mesh.clip_grad_norm_before_step(
        torch.optim.AdamW(model.parameters(), lr=5e-3), config
    )
    device = torch.device("cpu")
    dp_rank = parallel_mesh.dp_mesh().get_local_rank()
    dp_size = parallel_mesh.dp_mesh().size()
    gen = torch.Generator().manual_seed(7)
    input_ids = torch.randint(0, CONFIG.vocab_size, (BATCH, SEQ), generator=gen)
    labels = torch.randint(0, CONFIG.num_labels, (BATCH,), generator=gen)
    for step in range(STEPS):
        ids = input_ids[dp_rank::dp_size].to(device)
        loss = model(input_ids=ids, labels=labels[dp_rank::dp_size].to(device)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        reported = loss.detach().clone()
        dist.all_reduce(reported, group=parallel_mesh.dp_mesh().get_group())
        if dist.get_rank() == 0:
            print(f"LOSS {step} {reported.item() / dp_size:.8f}")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
