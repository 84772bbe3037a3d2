"""A BERT encoder from a tiny Hugging Face config with NxD layers swapped in (legacy NxD style).

The pattern of the NxD BERT pretraining sample: subclass the Hugging Face modules, replace their
linears with ColumnParallelLinear / RowParallelLinear, divide the head count by the TP size, and
swap the new modules into the model after it is built. Never run as-is.
"""

import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
from neuronx_distributed.parallel_layers import layers, parallel_state
from neuronx_distributed.trainer import (
    initialize_parallel_model,
    initialize_parallel_optimizer,
    neuronx_distributed_config,
)
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
        self.query = layers.ColumnParallelLinear(
            config.hidden_size, self.all_head_size, gather_output=False
        )
        self.key = layers.ColumnParallelLinear(
            config.hidden_size, self.all_head_size, gather_output=False
        )
        self.value = layers.ColumnParallelLinear(
            config.hidden_size, self.all_head_size, gather_output=False
        )
        self.num_attention_heads = (
            self.num_attention_heads // parallel_state.get_tensor_model_parallel_size()
        )
        self.all_head_size = self.all_head_size // parallel_state.get_tensor_model_parallel_size()


class ParallelSelfOutput(BertSelfOutput):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = layers.RowParallelLinear(
            config.hidden_size, config.hidden_size, input_is_parallel=True
        )


class ParallelIntermediate(BertIntermediate):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = layers.ColumnParallelLinear(
            config.hidden_size, config.intermediate_size, gather_output=False
        )


class ParallelOutput(BertOutput):
    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.dense = layers.RowParallelLinear(
            config.intermediate_size, config.hidden_size, input_is_parallel=True
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
    dist.init_process_group("xla")
    config = neuronx_distributed_config(tensor_parallel_size=int(os.environ.get("TP", "1")))
    torch.manual_seed(0)
    model = initialize_parallel_model(config, get_model)
    optimizer = initialize_parallel_optimizer(
        config, torch.optim.AdamW, model.parameters(), lr=5e-3
    )
    device = xm.xla_device()
    dp_rank = parallel_state.get_data_parallel_rank()
    dp_size = parallel_state.get_data_parallel_size()
    gen = torch.Generator().manual_seed(7)
    input_ids = torch.randint(0, CONFIG.vocab_size, (BATCH, SEQ), generator=gen)
    labels = torch.randint(0, CONFIG.num_labels, (BATCH,), generator=gen)
    for step in range(STEPS):
        ids = input_ids[dp_rank::dp_size].to(device)
        loss = model(input_ids=ids, labels=labels[dp_rank::dp_size].to(device)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.mark_step()
        reported = loss.detach().clone()
        dist.all_reduce(reported, group=parallel_state.get_data_parallel_group())
        if dist.get_rank() == 0:
            print(f"LOSS {step} {reported.item() / dp_size:.8f}")

    xm.rendezvous("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
