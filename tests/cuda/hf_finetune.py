"""A Hugging Face fine-tune written for GPUs: FlashAttention 2, bf16 autocast on cuda, `.cuda()`
batches. The model is a tiny Llama built from a config (no download). tests/test_cuda_pack.py
migrates it for the cpu target and runs it."""

import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig

device = "cuda" if torch.cuda.is_available() else "cpu"


def main(steps: int = 25) -> None:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = AutoModelForCausalLM.from_config(
        config, attn_implementation="flash_attention_2", torch_dtype=torch.float32
    )
    model.cuda()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = torch.randint(0, 64, (8, 16), generator=torch.Generator().manual_seed(0))
    losses = []
    for _ in range(steps):
        batch = {"input_ids": tokens.cuda(), "labels": tokens.cuda()}
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    print(f"first loss {losses[0]:.4f} last loss {losses[-1]:.4f}")
    sys.exit(0 if losses[-1] < losses[0] else 1)


if __name__ == "__main__":
    main()
