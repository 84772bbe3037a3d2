"""A small speech-style model written for a GPU, moved to the neuron device as it is.

It runs on TorchNeuron as far as the device goes, but it leans on APIs the TorchNeuron beta
does not run (or runs as something else): float64 statistics, torch.fft spectra, a
torch.distributions latent, sparse speaker embeddings, dynamic-shape compilation and
torch.func.vmap. `neuron-migrate check examples/beta_limits` reports each use.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Normal
from torch.func import vmap


class RunningNorm(nn.Module):
    """Feature normalisation with statistics kept in double precision."""

    def __init__(self, dim: int, momentum: float = 0.01):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float32))
        self.register_buffer("var", torch.ones(dim, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            stats = x.detach().float()
            batch_mean = stats.mean(dim=(0, 1))
            batch_var = stats.var(dim=(0, 1), unbiased=False)
            self.mean.lerp_(batch_mean, self.momentum)
            self.var.lerp_(batch_var, self.momentum)
        mean = self.mean.to(x.dtype)
        std = self.var.to(x.dtype).add(1e-5).sqrt()
        return (x - mean) / std


class SpectralEncoder(nn.Module):
    """Frames of a waveform -> magnitude spectra -> a Gaussian latent per frame."""

    def __init__(self, frame: int, latent: int, speakers: int):
        super().__init__()
        bins = frame // 2 + 1
        self.norm = RunningNorm(bins)
        self.speaker = nn.Embedding(speakers, bins, sparse=True)
        self.proj = nn.Linear(bins, 2 * latent)

    def forward(self, frames: torch.Tensor, speaker: torch.Tensor):
        spectrum = torch.fft.rfft(frames, dim=-1).abs().log1p()
        h = self.norm(spectrum) + self.speaker(speaker)[:, None, :]
        loc, log_scale = self.proj(h).chunk(2, dim=-1)
        posterior = Normal(loc, log_scale.clamp(-6, 3).exp())
        z = posterior.rsample()
        prior = Normal(torch.zeros_like(loc), torch.ones_like(loc))
        kl = torch.distributions.kl_divergence(posterior, prior).sum(-1).mean()
        return z, kl


class Decoder(nn.Module):
    def __init__(self, latent: int, frame: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 256), nn.GELU(), nn.Linear(256, frame))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


def frame_energy(frame: torch.Tensor) -> torch.Tensor:
    """Energy of one frame; batched over frames with vmap below."""
    return frame.pow(2).mean()


def make_frames(wave: torch.Tensor, frame: int) -> torch.Tensor:
    usable = wave.shape[-1] // frame * frame
    return wave[..., :usable].reshape(wave.shape[0], -1, frame)


def train(steps: int, frame: int, device: torch.device) -> float:
    encoder = SpectralEncoder(frame, latent=32, speakers=16).to(device)
    decoder = Decoder(32, frame).to(device)
    dense = list(decoder.parameters()) + [
        p for n, p in encoder.named_parameters() if not n.startswith("speaker")
    ]
    opt = torch.optim.AdamW(dense, lr=3e-4)
    sparse_opt = torch.optim.SparseAdam(encoder.speaker.parameters(), lr=1e-3)
    step_fn = torch.compile(lambda f, s: decoder(encoder(f, s)[0]), dynamic=False)

    loss = torch.zeros((), device=device)
    for step in range(steps):
        # utterances of different lengths: every step has a new number of frames
        length = 4000 + 160 * (step % 7)
        wave = torch.randn(8, length, device=device)
        speaker = torch.randint(0, 16, (8,), device=device)
        frames = make_frames(wave, frame)
        energy = vmap(vmap(frame_energy))(frames)
        recon = step_fn(frames, speaker)
        _, kl = encoder(frames, speaker)
        weights = energy / energy.sum(dim=1, keepdim=True)
        loss = (weights[..., None] * F.mse_loss(recon, frames, reduction="none")).sum(1).mean()
        loss = loss + 1e-3 * kl
        opt.zero_grad()
        sparse_opt.zero_grad()
        loss.backward()
        opt.step()
        sparse_opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    return float(loss.float().item())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--frame", type=int, default=400)
    parser.add_argument("--device", default="neuron")
    args = parser.parse_args()
    print("final loss:", train(args.steps, args.frame, torch.device(args.device)))


if __name__ == "__main__":
    main()
