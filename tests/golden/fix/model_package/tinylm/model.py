"""Model definition. Pure PyTorch: nothing in here knows which accelerator it runs on."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TinyLMConfig:
    vocab_size: int = 128
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    max_seq_len: int = 32
    dropout: float = 0.0


class Block(nn.Module):
    """Pre-norm transformer block: self-attention then a 4x MLP."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = nn.MultiheadAttention(
            cfg.d_model, cfg.n_heads, dropout=cfg.dropout, batch_first=True
        )
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model),
            nn.GELU(),
            nn.Linear(4 * cfg.d_model, cfg.d_model),
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        attn_out, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + attn_out
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """Decoder-only LM with learned positions and tied input/output embeddings."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying
        nn.init.normal_(self.tok_emb.weight, std=0.02)
        nn.init.normal_(self.pos_emb.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor = None):
        _, seq_len = tokens.shape
        if seq_len > self.cfg.max_seq_len:
            raise ValueError(f"sequence length {seq_len} > max_seq_len {self.cfg.max_seq_len}")
        pos = torch.arange(seq_len, device=tokens.device)
        # True above the diagonal = position may not attend to the future
        mask = torch.triu(
            torch.ones(seq_len, seq_len, dtype=torch.bool, device=tokens.device), diagonal=1
        )
        x = self.tok_emb(tokens) + self.pos_emb(pos)[None, :, :]
        for block in self.blocks:
            x = block(x, mask)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
