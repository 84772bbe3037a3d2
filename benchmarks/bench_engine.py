"""Measure what a `neuron-migrate check` costs against a bare LibCST parse of the same files.

Generates a deterministic synthetic tree (a share of files with legacy torch_xla code, the rest
ordinary PyTorch code without any prefilter trigger), then measures, best of --repeat rounds each
(round robin: every round runs every measurement once, so other load on a shared machine hits
them alike):

  1. the engine (`neuron_migrate.api.run`, check only) over the tree, serially and with the
     default process pool;
  2. bare `libcst.parse_module` (read + decode + parse) over exactly the files that pass the
     byte prefilter, serially;
  3. the byte prefilter alone (read + regex) over all files;
  4. `ast.parse` over the files that need parsing, for reference.

Speed is never asserted: this is a measurement tool. See benchmarks/README.md.

    python benchmarks/bench_engine.py --files 400 --legacy-share 0.2 --lines 300 --seed 0
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import json
import os
import platform
import pstats
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from neuron_migrate.api import POOL_THRESHOLD, enabled_rules, run
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.engine.ruleset import RuleSet

# ---- synthetic source -----------------------------------------------------------------------
#
# Clean code must not contain any prefilter trigger: with the built-in pack these are
# `xla`, `torch_xla`, `mark_step`, `step`, `sync`, `backend\s*=`, `mode\s*=`. So no
# `optimizer.step()`, no `plt.xlabel`, no `async`, no `mode=`: the generator checks every clean
# file against the real prefilter and reports the ones that still pass.

WORDS = [
    "hidden",
    "proj",
    "embed",
    "token",
    "layer",
    "block",
    "head",
    "feat",
    "score",
    "batch",
    "input",
    "output",
    "weight",
    "bias",
    "norm",
    "attn",
    "query",
    "key",
    "value",
    "scale",
    "width",
    "depth",
    "rate",
    "ratio",
    "count",
    "total",
    "index",
    "shard",
    "chunk",
    "window",
    "patch",
    "pixel",
    "frame",
    "label",
    "target",
    "sample",
    "record",
    "entry",
    "cache",
    "buffer",
    "state",
    "param",
    "grad",
    "loss",
    "metric",
    "epoch",
    "round",
    "phase",
    "stage",
    "level",
    "mask",
    "logit",
    "prob",
    "dim",
    "size",
    "seed",
    "path",
    "name",
    "item",
]

CLEAN_HEADER = [
    "import json",
    "import logging",
    "import math",
    "import os",
    "from dataclasses import dataclass, field",
    "from typing import Optional",
    "",
    "import numpy as np",
    "import torch",
    "import torch.nn as nn",
    "import torch.nn.functional as F",
    "from torch.utils.data import DataLoader, Dataset",
]

LEGACY_IMPORTS = [
    ["import torch_xla", "import torch_xla.core.xla_model as xm"],
    ["import torch_xla", "from torch_xla.core import xla_model as xm"],
    [
        "import torch_xla",
        "import torch_xla.core.xla_model as xm",
        "import torch_xla.distributed.parallel_loader as pl",
    ],
    [
        "import torch_xla",
        "import torch_xla.core.xla_model as xm",
        "from torch_xla.core.xla_model import mark_step",
    ],
]


class Gen:
    """Blocks of Python source (lists of lines, indentation level 0), from one seeded RNG."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.counter = 0

    def name(self, parts: int = 2) -> str:
        self.counter += 1
        words = self.rng.sample(WORDS, parts)
        return "_".join(words) + f"_{self.counter}"

    def cls(self) -> str:
        self.counter += 1
        return "".join(w.capitalize() for w in self.rng.sample(WORDS, 2)) + str(self.counter)

    def num(self) -> int:
        return self.rng.choice([8, 16, 32, 64, 128, 256, 512, 768, 1024])

    # ---- ordinary PyTorch / Python code ----

    def module_class(self) -> list[str]:
        name, n = self.cls(), self.rng.randint(2, 5)
        dims = [self.num() for _ in range(n + 1)]
        out = [f"class {name}(nn.Module):", f'    """A stack of {n} layers."""', ""]
        out.append(f"    def __init__(self, dropout: float = {self.rng.choice([0.0, 0.1, 0.2])}):")
        out.append("        super().__init__()")
        for i in range(n):
            out.append(f"        self.fc{i} = nn.Linear({dims[i]}, {dims[i + 1]})")
        out.append(f"        self.norm = nn.LayerNorm({dims[-1]})")
        out.append("        self.dropout = nn.Dropout(dropout)")
        out.append("")
        out.append("    def forward(self, x: torch.Tensor) -> torch.Tensor:")
        for i in range(n):
            act = self.rng.choice(["F.relu", "F.gelu", "torch.tanh", "F.silu"])
            out.append(f"        x = self.dropout({act}(self.fc{i}(x)))")
        out.append("        return self.norm(x)")
        return out

    def dataset_class(self) -> list[str]:
        name = self.cls()
        return [
            f"class {name}(Dataset):",
            "    def __init__(self, root: str, length: int = 1000):",
            "        self.root = root",
            "        self.length = length",
            f"        self.items = [os.path.join(root, f'{{i:05d}}.npy') for i in range({self.num()})]",
            "",
            "    def __len__(self) -> int:",
            "        return self.length",
            "",
            "    def __getitem__(self, index: int):",
            "        rng = np.random.default_rng(index)",
            f"        features = torch.from_numpy(rng.standard_normal({self.num()})).float()",
            f"        label = int(rng.integers(0, {self.rng.randint(2, 100)}))",
            "        return features, label",
        ]

    def config_class(self) -> list[str]:
        out = ["@dataclass", f"class {self.cls()}Config:"]
        for _ in range(self.rng.randint(3, 8)):
            kind = self.rng.choice(["int", "float", "str", "bool"])
            value = {
                "int": str(self.num()),
                "float": str(self.rng.choice([1e-3, 3e-4, 0.9, 0.5])),
                "str": repr(self.rng.choice(WORDS)),
                "bool": self.rng.choice(["True", "False"]),
            }[kind]
            out.append(f"    {self.name()}: {kind} = {value}")
        out.append("    tags: list = field(default_factory=list)")
        return out

    def train_epoch(self) -> list[str]:
        fn = self.name()
        return [
            f"def {fn}(model, loader, optimizer, scheduler=None, clip: float = 1.0):",
            '    """One pass over the data; returns the mean loss."""',
            "    model.train()",
            "    total, seen = 0.0, 0",
            "    for batch_index, (inputs, labels) in enumerate(loader):",
            "        optimizer.zero_grad(set_to_none=True)",
            "        logits = model(inputs)",
            "        loss = F.cross_entropy(logits, labels)",
            "        loss.backward()",
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)",
            "        total += loss.item() * inputs.size(0)",
            "        seen += inputs.size(0)",
            f"        if batch_index % {self.rng.choice([10, 50, 100])} == 0:",
            "            logging.info('batch %d loss %.4f', batch_index, loss.item())",
            "    return total / max(seen, 1)",
        ]

    def evaluate(self) -> list[str]:
        fn = self.name()
        return [
            "@torch.no_grad()",
            f"def {fn}(model, loader) -> dict:",
            "    model.eval()",
            "    correct, count = 0, 0",
            "    for inputs, labels in loader:",
            "        preds = model(inputs).argmax(dim=-1)",
            "        correct += (preds == labels).sum().item()",
            "        count += labels.numel()",
            "    accuracy = correct / max(count, 1)",
            "    return {'accuracy': accuracy, 'count': count}",
        ]

    def utility(self) -> list[str]:
        fn, a, b = self.name(), self.name(1), self.name(1)
        body = self.rng.choice(
            [
                [
                    f"    {a} = [math.sqrt(abs(v)) for v in values if v is not None]",
                    f"    {b} = sum({a}) / max(len({a}), 1)",
                    f"    return {{'mean': {b}, 'n': len({a})}}",
                ],
                [
                    "    result = {}",
                    "    for key, v in sorted(values.items()):",
                    "        if isinstance(v, (int, float)):",
                    "            result[key] = round(float(v), 4)",
                    "        elif isinstance(v, str):",
                    "            result[key] = v.strip().lower()",
                    "        else:",
                    "            result[key] = repr(v)",
                    "    return result",
                ],
                [
                    "    try:",
                    "        with open(values, encoding='utf-8') as handle:",
                    f"            {a} = json.load(handle)",
                    "    except (OSError, ValueError) as exc:",
                    "        logging.warning('cannot read %s: %s', values, exc)",
                    "        return None",
                    f"    return {a}.get('{self.rng.choice(WORDS)}', {self.num()})",
                ],
                [
                    f"    {a} = torch.as_tensor(values, dtype=torch.float32)",
                    f"    {b} = ({a} - {a}.mean()) / ({a}.std() + 1e-6)",
                    f"    return torch.clamp({b}, min=-{self.rng.randint(2, 6)}, max={self.rng.randint(2, 6)})",
                ],
            ]
        )
        return [f"def {fn}(values):", f'    """Helper {self.counter}."""', *body]

    def main_function(self) -> list[str]:
        model_cls = self.cls()
        return [
            "def main(argv: Optional[list] = None) -> int:",
            "    import argparse",
            "",
            "    parser = argparse.ArgumentParser(description=__doc__)",
            f"    parser.add_argument('--epochs', type=int, default={self.rng.randint(1, 30)})",
            f"    parser.add_argument('--lr', type=float, default={self.rng.choice([1e-3, 3e-4])})",
            "    parser.add_argument('--out', default='checkpoints')",
            "    args = parser.parse_args(argv)",
            "    os.makedirs(args.out, exist_ok=True)",
            "    torch.manual_seed(0)",
            f"    model = {model_cls}()",
            "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)",
            "    for epoch in range(args.epochs):",
            "        logging.info('epoch %d', epoch)",
            "        torch.save(model.state_dict(), os.path.join(args.out, f'{epoch}.pt'))",
            "    return 0",
        ]

    def properties_class(self) -> list[str]:
        name, a, b = self.cls(), self.name(1), self.name(1)
        return [
            f"class {name}:",
            f'    """Keeps running statistics of {self.rng.choice(WORDS)} values."""',
            "",
            "    __slots__ = ('_values', '_limit')",
            "",
            f"    def __init__(self, limit: int = {self.num()}):",
            "        self._values: list = []",
            "        self._limit = limit",
            "",
            "    @property",
            f"    def {a}(self) -> float:",
            "        if not self._values:",
            "            return float('nan')",
            "        return sum(self._values) / len(self._values)",
            "",
            "    @property",
            f"    def {b}(self) -> float:",
            f"        mean = self.{a}",
            "        return math.sqrt(sum((v - mean) ** 2 for v in self._values) / max(len(self._values), 1))",
            "",
            "    def add(self, value: float) -> None:",
            "        self._values.append(float(value))",
            "        if len(self._values) > self._limit:",
            "            del self._values[0]",
            "",
            "    def __repr__(self) -> str:",
            f"        return f'{name}(n={{len(self._values)}}, mean={{self.{a}:.3f}})'",
        ]

    def nested_function(self) -> list[str]:
        fn, inner = self.name(), self.name(1)
        kind = self.rng.choice(["'mean'", "'sum'", "'max'"])
        return [
            f"def {fn}(tensors: list, how: str = {kind}, weights=None):",
            "    # reduce a list of tensors, optionally weighted",
            f"    def {inner}(t, w):",
            "        return t * w if w is not None else t",
            "",
            "    if not tensors:",
            "        raise ValueError(f'nothing to reduce with {how!r}')",
            "    weights = weights or [None] * len(tensors)",
            f"    stacked = torch.stack([{inner}(t, w) for t, w in zip(tensors, weights)])",
            "    if how == 'mean':",
            "        return stacked.mean(dim=0)",
            "    elif how == 'sum':",
            "        return stacked.sum(dim=0)",
            "    elif how == 'max':",
            "        return stacked.max(dim=0).values",
            "    table = {'min': lambda s: s.min(dim=0).values, 'prod': lambda s: s.prod(dim=0)}",
            "    try:",
            "        return table[how](stacked)",
            "    finally:",
            "        logging.debug('reduced %d tensors', len(tensors))",
        ]

    def constants(self) -> list[str]:
        out = [f"# constants for the {self.rng.choice(WORDS)} {self.rng.choice(WORDS)} path"]
        for _ in range(self.rng.randint(2, 6)):
            out.append(f"{self.name().upper()} = {self.num()}")
        return out

    def clean_block(self) -> list[str]:
        makers = [
            self.module_class,
            self.dataset_class,
            self.config_class,
            self.train_epoch,
            self.evaluate,
            self.utility,
            self.utility,
            self.properties_class,
            self.nested_function,
            self.constants,
        ]
        return self.rng.choice(makers)()

    # ---- legacy torch_xla code (inside functions, classes, loops) ----

    def legacy_device(self) -> list[str]:
        return self.rng.choice(
            [
                ["def get_device():", "    return xm.xla_device()"],
                ["def get_device():", "    dev = torch_xla.device()", "    return dev"],
                ["DEVICE = xm.xla_device()"],
                [
                    "def device_for(rank: int):",
                    "    if rank < 0:",
                    "        return torch.device('cpu')",
                    "    return xm.xla_device(rank)",
                ],
            ]
        )

    def legacy_train_loop(self) -> list[str]:
        fn = self.name()
        sync = self.rng.choice(["xm.mark_step()", "torch_xla.sync()"])
        return [
            f"def {fn}(model, loader, optimizer, epochs: int = {self.rng.randint(1, 10)}):",
            "    device = xm.xla_device()",
            "    model.to(device)",
            "    model.train()",
            "    for epoch in range(epochs):",
            "        for inputs, labels in loader:",
            "            inputs, labels = inputs.to(device), labels.to(device)",
            "            optimizer.zero_grad()",
            "            loss = F.cross_entropy(model(inputs), labels)",
            "            loss.backward()",
            "            optimizer.step()",
            "            # cut the graph here",
            f"            {sync}",
            "        logging.info('epoch %d done', epoch)",
            "    xm.wait_device_ops()",
            "    return model",
        ]

    def legacy_step_context(self) -> list[str]:
        fn = self.name()
        return [
            f"def {fn}(model, loader, optimizer):",
            "    for inputs, labels in loader:",
            "        with torch_xla.step():",
            "            # forward and backward",
            "            loss = model(inputs).sum()",
            "            loss.backward()",
            "            optimizer.step()",
            "            optimizer.zero_grad()",
        ]

    def legacy_strings(self) -> list[str]:
        fn = self.name()
        return [
            f"def {fn}(batch):",
            f"    buffer = torch.zeros({self.num()}, {self.num()}).to('xla')",
            f'    other = torch.ones({self.num()}, device="xla:0")',
            "    if buffer.device.type == 'xla':",
            "        logging.info('running on the accelerator')",
            "    return buffer + other.sum() + batch",
        ]

    def legacy_compile(self) -> list[str]:
        return self.rng.choice(
            [
                [
                    "def build(model):",
                    '    model = torch.compile(model, backend="openxla")',
                    "    return model",
                ],
                [
                    f"def {self.name()}(train_fn):",
                    "    return torch_xla.compile(train_fn, full_graph=True, name='train')",
                ],
                [
                    "@torch_xla.compile",
                    f"def {self.name()}(x):",
                    "    return x * 2 + 1",
                ],
                [
                    "def fast(model):",
                    '    return torch.compile(model, mode="max-autotune")',
                ],
            ]
        )

    def legacy_trainer(self) -> list[str]:
        name = self.cls()
        return [
            f"class {name}Trainer:",
            "    def __init__(self, model, optimizer):",
            "        self.device = xm.xla_device()",
            "        self.model = model.to(self.device)",
            "        self.optimizer = optimizer",
            "",
            "    def fit(self, loader, epochs: int = 1):",
            "        for epoch in range(epochs):",
            "            for step, (inputs, labels) in enumerate(loader):",
            "                loss = F.mse_loss(self.model(inputs.to(self.device)), labels)",
            "                loss.backward()",
            "                self.optimizer.step()",
            "                xm.mark_step()",
            "                if step % 100 == 0:",
            "                    logging.info('step %d loss %.4f', step, loss.item())",
            "        xm.wait_device_ops()",
        ]

    def legacy_block(self) -> list[str]:
        makers = [
            self.legacy_device,
            self.legacy_train_loop,
            self.legacy_train_loop,
            self.legacy_step_context,
            self.legacy_strings,
            self.legacy_compile,
            self.legacy_trainer,
        ]
        return self.rng.choice(makers)()


def make_source(rng: random.Random, target_lines: int, legacy: bool) -> str:
    gen = Gen(rng)
    header = [f'"""Module {rng.randint(0, 10**6)}: synthetic code for the benchmark."""', ""]
    header += CLEAN_HEADER
    if legacy:
        header += rng.choice(LEGACY_IMPORTS)
    header += ["", "logger = logging.getLogger(__name__)"]
    blocks: list[list[str]] = []
    count = len(header)
    while count < target_lines - 20:
        block = gen.clean_block()
        blocks.append(block)
        count += len(block) + 2
    if legacy:
        for _ in range(rng.randint(3, 8)):
            blocks.insert(rng.randint(0, len(blocks)), gen.legacy_block())
    blocks.append(gen.main_function())
    lines = header
    for block in blocks:
        lines += ["", "", *block]
    lines += ["", "", 'if __name__ == "__main__":', "    raise SystemExit(main())", ""]
    return "\n".join(lines)


def generate(
    root: Path, files: int, legacy_share: float, lines: int, seed: int
) -> list[tuple[Path, bool]]:
    """Write the tree; returns (path, is_legacy) for every file, in a stable order."""
    top = random.Random(seed)
    n_legacy = round(files * legacy_share)
    legacy_ids = set(top.sample(range(files), n_legacy))
    made = []
    for i in range(files):
        rng = random.Random(f"{seed}-{i}")
        target = max(30, int(lines * rng.uniform(0.6, 1.4)))
        source = make_source(rng, target, i in legacy_ids)
        ast.parse(source)  # the generator must only write valid Python
        folder = root / f"pkg_{i % 8}" / f"sub_{(i // 8) % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"module_{i:05d}.py"
        path.write_text(source, encoding="utf-8")
        made.append((path, i in legacy_ids))
    return made


# ---- measurements ---------------------------------------------------------------------------


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def measure(args: argparse.Namespace, root: Path) -> dict:
    load_before = _load()
    root = root.resolve()
    made = generate(root, args.files, args.legacy_share, args.lines, args.seed)
    settings = Settings(root=root.resolve())
    ruleset = RuleSet.build(enabled_rules(settings))
    paths = [p for p, _ in made]
    contents = {p: p.read_bytes() for p in paths}
    passing = [p for p in paths if ruleset.wants(contents[p])]
    passing_set = set(passing)
    legacy = [p for p, is_legacy in made if is_legacy]
    clean = [p for p, is_legacy in made if not is_legacy]
    clean_passing = [p for p in clean if p in passing_set]
    legacy_missed = [p for p in legacy if p not in passing_set]
    lines_total = sum(contents[p].count(b"\n") for p in paths)
    lines_parsed = sum(contents[p].count(b"\n") for p in passing)
    bytes_total = sum(len(v) for v in contents.values())
    del contents

    import libcst  # noqa: F401 - imported up front so no timed run pays for the import

    def prefilter(files: list[Path]) -> Callable[[], int]:
        def go() -> int:
            wanted = 0
            for path in files:
                with open(path, "rb") as handle:
                    if ruleset.wants(handle.read()):
                        wanted += 1
            return wanted

        return go

    def bare_libcst() -> int:
        for path in passing:
            with open(path, "rb") as handle:
                libcst.parse_module(handle.read().decode("utf-8"))
        return len(passing)

    def bare_ast() -> int:
        for path in passing:
            with open(path, "rb") as handle:
                ast.parse(handle.read().decode("utf-8"), filename=str(path))
        return len(passing)

    options = Options()
    repeat = args.repeat
    jobs = os.cpu_count() or 1
    # round robin, best of `repeat` each: a slow spell of a shared machine then hits every
    # measurement alike instead of one of them (the ratios are what matter)
    clean_bytes = [p.read_bytes() for p in clean]

    def regex_only() -> int:
        return sum(1 for data in clean_bytes if ruleset.wants(data))

    # (key, function, consecutive runs per round): the cheap prefilter passes run a few times
    # in a row, so that one slow spell (or a page cache refill) does not make the figure
    plan: list[tuple[str, Callable[[], object], int]] = [
        ("prefilter_all_files", prefilter(paths), 5),
        ("prefilter_clean_files", prefilter(clean), 5),
        ("prefilter_regex_clean_files", regex_only, 5),
        ("bare_libcst_parse", bare_libcst, 1),
        ("ast_parse", bare_ast, 1),
        ("engine_serial", lambda: run([root], settings, options, jobs=1, cache=False), 1),
        (
            "engine_serial_parse_files_only",
            lambda: run(passing, settings, options, jobs=1, cache=False),
            1,
        ),
        (
            "engine_serial_clean_files_only",
            lambda: run(clean, settings, options, jobs=1, cache=False),
            1,
        ),
        ("engine_pool", lambda: run([root], settings, options, jobs=None, cache=False), 1),
    ]
    seconds = dict.fromkeys((key for key, _, _ in plan), float("inf"))
    # CPU time of this process (not of the pool's workers): less sensitive to other load
    cpu_seconds = dict(seconds)
    values: dict[str, object] = {}
    for _ in range(repeat):
        for key, fn, runs in plan:
            for _ in range(runs):
                start, cpu_start = time.perf_counter(), time.process_time()
                values[key] = fn()
                cpu_seconds[key] = min(cpu_seconds[key], time.process_time() - cpu_start)
                seconds[key] = min(seconds[key], time.perf_counter() - start)
    del cpu_seconds["engine_pool"]
    t_prefilter_all, t_prefilter_clean = (
        seconds["prefilter_all_files"],
        seconds["prefilter_clean_files"],
    )
    t_libcst, t_ast = seconds["bare_libcst_parse"], seconds["ast_parse"]
    t_serial, t_pool = seconds["engine_serial"], seconds["engine_pool"]
    t_serial_passing = seconds["engine_serial_parse_files_only"]
    t_serial_clean = seconds["engine_serial_clean_files_only"]
    result, pool_result = values["engine_serial"], values["engine_pool"]

    codes = Counter(f.code for r in result.files for f in r.findings)
    errors = [r.error for r in result.files if r.error]
    same = [(r.path, [(f.code, f.span) for f in r.findings]) for r in result.files] == [
        (r.path, [(f.code, f.span) for f in r.findings]) for r in pool_result.files
    ]

    def rate(n: int, t: float) -> float:
        return n / t if t > 0 else float("inf")

    figures = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": jobs,
            "libcst": getattr(libcst, "__version__", None) or _version("libcst"),
        },
        "load_average_before": load_before,
        "load_average_after": _load(),
        "params": {
            "files": args.files,
            "legacy_share": args.legacy_share,
            "lines": args.lines,
            "seed": args.seed,
            "repeat": repeat,
        },
        "prefilter_pattern": ruleset.prefilter.pattern.decode() if ruleset.prefilter else None,
        "files_total": len(paths),
        "files_legacy": len(legacy),
        "files_clean": len(clean),
        "files_needing_parse": len(passing),
        "clean_files_passing_prefilter": len(clean_passing),
        "legacy_files_missed_by_prefilter": len(legacy_missed),
        "lines_total": lines_total,
        "lines_parsed": lines_parsed,
        "bytes_total": bytes_total,
        "findings": sum(codes.values()),
        "findings_by_code": dict(sorted(codes.items())),
        "files_with_findings": sum(1 for r in result.files if r.findings),
        "internal_errors": len(errors),
        "pool_results_match_serial": same,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "lines_per_second": {
            "bare_libcst_parse": rate(lines_parsed, t_libcst),
            "ast_parse": rate(lines_parsed, t_ast),
            "engine_serial": rate(lines_parsed, t_serial),
            "engine_serial_parse_files_only": rate(lines_parsed, t_serial_passing),
            "engine_pool": rate(lines_parsed, t_pool),
            "prefilter_all_files": rate(lines_total, t_prefilter_all),
        },
        "ratios": {
            "engine_serial_over_bare_libcst": t_serial / t_libcst if passing else None,
            "engine_serial_over_bare_libcst_cpu": (
                cpu_seconds["engine_serial"] / cpu_seconds["bare_libcst_parse"]
                if passing and cpu_seconds["bare_libcst_parse"] > 0
                else None
            ),
            "engine_serial_parse_files_only_over_bare_libcst": (
                t_serial_passing / t_libcst if passing else None
            ),
            "bare_libcst_over_ast": t_libcst / t_ast if passing else None,
            "prefilter_us_per_clean_file": (t_prefilter_clean / len(clean) * 1e6)
            if clean
            else None,
            "prefilter_regex_us_per_clean_file": (
                seconds["prefilter_regex_clean_files"] / len(clean) * 1e6 if clean else None
            ),
            "engine_us_per_clean_file": (t_serial_clean / len(clean) * 1e6) if clean else None,
            "pool_speedup": t_serial / t_pool if t_pool else None,
            "pool_jobs": jobs,
            "pool_used": jobs > 1 and len(paths) >= POOL_THRESHOLD,
        },
        "goal_engine_over_parse": 2.5,
    }
    if args.phases and passing:
        try:
            figures["phases"] = phases(passing, settings, repeat)
        except Exception as exc:  # noqa: BLE001 - reaches into engine internals that may change
            figures["phases"] = {"error": f"{type(exc).__name__}: {exc}"}
    if args.profile and legacy:
        figures["profile"] = profile_one(
            max(legacy, key=lambda p: p.stat().st_size), settings, args.profile
        )
    return figures


def _load() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine skews every figure."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _version(package: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(package)
    except Exception:  # noqa: BLE001
        return None


def phases(passing: list[Path], settings: Settings, repeat: int) -> dict:
    """Where analyze() spends its time: each step of pipeline.analyze on its own, best of
    `repeat` per file, summed over the files needing parse. Reaches into engine internals."""
    import libcst as cst

    from neuron_migrate.checkers.base import Job
    from neuron_migrate.checkers.python import _replacement, analyze
    from neuron_migrate.engine.matcher import Matcher
    from neuron_migrate.engine.positions import node_spans
    from neuron_migrate.engine.scopes import collect_imports

    job = Job(enabled_rules(settings), settings, Options())
    flags = {"compile": settings.compile}
    totals: Counter = Counter()

    def timed(key: str, fn: Callable[[], object]) -> object:
        seconds, value = best_of(repeat, fn)
        totals[key] += seconds
        return value

    def match(module, ruleset):
        # a fresh import table each time: the matcher counts uses on its bindings
        matcher = Matcher(module, collect_imports(module), ruleset, job.target, flags)
        module.visit(matcher)
        return matcher

    def one(path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        ruleset = job.ruleset_for(path.relative_to(settings.root).as_posix())
        timed("analyze() total", lambda: analyze(text, str(path), job, ruleset))
        module = timed("parse_module", lambda: cst.parse_module(text))
        timed("collect_imports", lambda: collect_imports(module))
        matcher = timed("collect_imports + Matcher visit", lambda: match(module, ruleset))
        nodes = [h.node for h in matcher.hits]
        timed("node_spans (positions)", lambda: node_spans(module, nodes))
        edits = [h for h in matcher.hits if h.edit is not None]
        timed("fix replacements", lambda: [_replacement(module, h) for h in edits])
        timed("reference: no-op CSTVisitor visit", lambda: module.visit(cst.CSTVisitor()))
        timed("reference: full codegen (module.code)", lambda: module.code)

    for path in passing:
        one(path)
    parse = totals["parse_module"]
    return {
        key: {"seconds": value, "x_parse": value / parse if parse else None}
        for key, value in totals.items()
    }


def profile_one(path: Path, settings: Settings, top: int) -> str:
    """cProfile of one legacy file through `pipeline.analyze`, top entries by cumulative time."""
    from neuron_migrate.checkers.base import Job
    from neuron_migrate.checkers.python import analyze

    job = Job(enabled_rules(settings), settings, Options())
    ruleset = job.ruleset_for(path.name)
    text = path.read_text(encoding="utf-8")
    analyze(text, str(path), job, ruleset)  # warm up (imports, caches)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        analyze(text, str(path), job, ruleset)
    profiler.disable()
    out = io.StringIO()
    out.write(f"cProfile: 5 x analyze() of {path.name} ({text.count(chr(10))} lines)\n")
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# ---- output ---------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} us"


def table(f: dict) -> str:
    s, lps, r = f["seconds"], f["lines_per_second"], f["ratios"]
    p = f["params"]
    out = []
    add = out.append
    add(
        f"neuron-migrate engine benchmark: {p['files']} files, legacy share {p['legacy_share']}, "
        f"~{p['lines']} lines, seed {p['seed']}, best of {p['repeat']}"
    )
    m = f["machine"]
    add(f"python {m['python']}, libcst {m['libcst']}, {m['cpus']} CPUs, {m['platform']}")
    add(f"load average before {f['load_average_before']}, after {f['load_average_after']}")
    add("")
    add(f"  files total                   {f['files_total']:>9,}")
    add(
        f"  files needing parse           {f['files_needing_parse']:>9,}   "
        f"(legacy {f['files_legacy']}, clean files passing the prefilter "
        f"{f['clean_files_passing_prefilter']}, legacy files missed {f['legacy_files_missed_by_prefilter']})"
    )
    add(f"  lines total                   {f['lines_total']:>9,}")
    add(f"  lines parsed                  {f['lines_parsed']:>9,}")
    add(
        f"  findings                      {f['findings']:>9,}   "
        + " ".join(f"{k}:{v}" for k, v in f["findings_by_code"].items())
    )
    add("")
    add(f"  {'measurement':<47}{'wall s':>8}{'cpu s':>8}{'lines/s':>10}")
    rows = [
        ("prefilter_all_files", "prefilter alone, all files (read + regex)"),
        ("bare_libcst_parse", "bare libcst.parse_module, files needing parse"),
        ("ast_parse", "ast.parse, files needing parse (reference)"),
        ("engine_serial", "engine check, whole tree, jobs=1"),
        ("engine_serial_parse_files_only", "engine check, files needing parse, jobs=1"),
        ("engine_pool", f"engine check, whole tree, pool ({r['pool_jobs']} jobs)"),
        ("engine_serial_clean_files_only", "engine check, clean files only, jobs=1"),
    ]
    cpu = f["cpu_seconds"]
    for key, label in rows:
        rate = lps.get(key)
        rate_text = f"{rate:>10,.0f}" if rate is not None else f"{'':>10}"
        cpu_text = f"{cpu[key]:>8.3f}" if key in cpu else f"{'-':>8}"
        add(f"  {label:<47}{s[key]:>8.3f}{cpu_text}{rate_text}")
    add("  (lines/s: lines parsed / wall s, for the prefilter all lines; cpu s: this process only)")
    add("")
    goal = f["goal_engine_over_parse"]
    ratio = r["engine_serial_over_bare_libcst"]
    verdict = "within" if ratio is not None and ratio <= goal else "OVER"
    pool = "" if r["pool_used"] else f"; fewer than {POOL_THRESHOLD} files: the run stays serial"
    lines = [
        (
            "engine serial / bare libcst parse",
            _x(ratio),
            "(no file needs parsing)" if ratio is None else f"({verdict} the <= {goal}x goal)",
        ),
        ("  same, in CPU time", _x(r["engine_serial_over_bare_libcst_cpu"]), ""),
        (
            "  same, engine on files needing parse only",
            _x(r["engine_serial_parse_files_only_over_bare_libcst"]),
            "",
        ),
        ("bare libcst parse / ast.parse", _x(r["bare_libcst_over_ast"]), ""),
        ("prefilter cost per clean file", _us(r["prefilter_us_per_clean_file"]), "(read + regex)"),
        (
            "  of which the regex",
            _us(r["prefilter_regex_us_per_clean_file"]),
            "(on bytes in memory)",
        ),
        (
            "engine cost per clean file",
            _us(r["engine_us_per_clean_file"]),
            "(discover + read + prefilter + result)",
        ),
        (
            f"pool speedup ({r['pool_jobs']} jobs)",
            _x(r["pool_speedup"]),
            f"(engine serial / pool{pool})",
        ),
    ]
    for label, value, note in lines:
        add(f"  {label:<44}{value:>10}   {note}".rstrip())
    if not f["pool_results_match_serial"]:
        add("  WARNING: the pool's findings differ from the serial run's")
    if f["internal_errors"]:
        add(f"  WARNING: {f['internal_errors']} files ended in an internal error")
    if "phases" in f:
        add("")
        ph = f["phases"]
        if "error" in ph:
            add(f"  phases unavailable: {ph['error']}")
        else:
            add(
                f"  {'analyze() phases, files needing parse (best of each)':<56}{'seconds':>9}{'x parse':>9}"
            )
            for key, value in ph.items():
                add(f"  {key:<56}{value['seconds']:>9.3f}{value['x_parse']:>8.2f}x")
    if "profile" in f:
        add("")
        add(f["profile"].rstrip())
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=400, help="files in the tree (default 400)")
    parser.add_argument(
        "--legacy-share", type=float, default=0.2, help="share of legacy files (default 0.2)"
    )
    parser.add_argument(
        "--lines", type=int, default=300, help="mean lines per file, varied +-40%% (default 300)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=3, help="best of this many runs each (default 3)"
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write the tree here and keep it")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also time each step of pipeline.analyze separately (reaches into engine internals)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=15,
        default=0,
        metavar="N",
        help="also cProfile one legacy file through pipeline.analyze; print the top N (15) cumulative",
    )
    args = parser.parse_args(argv)
    if args.files < 1 or not 0.0 <= args.legacy_share <= 1.0 or args.lines < 1 or args.repeat < 1:
        parser.error("need --files >= 1, 0 <= --legacy-share <= 1, --lines >= 1, --repeat >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep is not None:
        if args.keep.exists() and any(args.keep.iterdir()):
            print(f"--keep {args.keep}: the folder is not empty", file=sys.stderr)
            return 2
        args.keep.mkdir(parents=True, exist_ok=True)
        root = args.keep
    else:
        root = Path(tempfile.mkdtemp(prefix="nm-bench-"))
    try:
        figures = measure(args, root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    else:
        print(table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
