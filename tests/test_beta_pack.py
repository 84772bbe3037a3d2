"""Pack `neuron-beta` (NM801-NM810): on by default, off as a pack or per file, precise at the use."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from neuron_migrate.api import check_text, enabled_rules
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules
from tests.conftest import REPO, codes, fixed, run_code
from tests.test_cli import invoke

BETA = """\
import torch
from torch import nn

emb = nn.Embedding(100, 16, sparse=True)
x = torch.ones(4, dtype=torch.float64)
y = torch.fft.rfft(x)
step = torch.compile(lambda t: t * 2, dynamic=True)
"""
BETA_CODES = ["NM801", "NM806", "NM805", "NM809"]


def _beta(found: list[str]) -> list[str]:
    return [c for c in found if c.startswith("NM8")]


def _check(code: str, relative: str, **settings) -> list[str]:
    """Findings of the library API for one file at a path relative to the project root."""
    s = Settings(root=REPO, **settings)
    job = Job(enabled_rules(s), s, Options())

    def check(text, filename, job, relative):
        return check_text(text, filename, job, relative)

    return [f.code for f in check(textwrap.dedent(code), relative, job, relative).findings]


def test_pack_is_loaded_with_its_rules():
    rules = [r for r in load_rules() if r.pack == "neuron-beta"]
    assert [r.code for r in rules] == [f"NM8{n:02d}" for n in range(1, 13)]
    assert {r.code: r.severity.value for r in rules} == {
        "NM801": "error",
        "NM802": "error",
        "NM803": "error",
        "NM804": "error",
        "NM805": "warning",
        "NM806": "warning",
        "NM807": "warning",
        "NM808": "warning",
        "NM809": "warning",
        "NM810": "info",
        "NM811": "error",
        "NM812": "warning",
    }
    fixes = {r.code: r.fix_safety for r in rules}
    assert fixes["NM806"] == "unsafe / manual" and fixes["NM809"] == "unsafe / manual"
    assert {c for c, f in fixes.items() if f == "manual"} == set(fixes) - {"NM806", "NM809"}


def test_on_by_default():
    assert _beta(codes(BETA)) == BETA_CODES


# ---- turned off as a pack and per file -------------------------------------------------------


def test_cli_ignore_nm8_turns_the_pack_off(tmp_path: Path):
    (tmp_path / "model.py").write_text(BETA)
    on = json.loads(invoke("check", "--format", "json", str(tmp_path)).output)
    assert [d["code"] for d in on] == BETA_CODES
    off = invoke("check", "--ignore", "NM8", str(tmp_path))
    assert off.exit_code == 0, off.output
    assert "NM8" not in off.output


def test_cli_ignore_one_beta_rule_keeps_the_others(tmp_path: Path):
    (tmp_path / "model.py").write_text(BETA)
    data = json.loads(
        invoke("check", "--format", "json", "--ignore", "NM806", str(tmp_path)).output
    )
    assert [d["code"] for d in data] == ["NM801", "NM805", "NM809"]


def test_per_file_ignores_in_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.neuron-migrate.per-file-ignores]\n"cpu_only/*" = ["NM8"]\n'
    )
    (tmp_path / "cpu_only").mkdir()
    (tmp_path / "cpu_only" / "metrics.py").write_text(BETA)
    (tmp_path / "train.py").write_text(BETA)
    data = json.loads(invoke("check", "--format", "json", ".", cwd=tmp_path).output)
    assert {d["path"] for d in data} == {"train.py"}
    assert [d["code"] for d in data] == BETA_CODES


def test_per_file_ignores_library_api():
    ignores = {"cpu_only/*": ("NM8",)}
    assert _beta(_check(BETA, "cpu_only/metrics.py", per_file_ignores=ignores)) == []
    assert _beta(_check(BETA, "train.py", per_file_ignores=ignores)) == BETA_CODES
    assert _beta(_check(BETA, "train.py", ignore=("NM8",))) == []


def test_ignored_beta_pack_does_not_touch_the_code(tmp_path: Path):
    path = tmp_path / "model.py"
    path.write_text(BETA)
    result = invoke("check", "--fix", "--unsafe-fixes", "--ignore", "NM8", str(path))
    assert result.exit_code == 0
    assert path.read_text() == BETA


# ---- look-alikes are not reported --------------------------------------------------------------

LOOK_ALIKES = {
    "local sparse variable": """
        import torch
        sparse = True
        emb = torch.nn.Embedding(10, 4, sparse=sparse is False)
        if sparse:
            print("sparse")
    """,
    "float64 in a log string": """
        import logging
        import torch
        logging.info("casting to float64 / double for the report")
        msg = f"dtype float64 is {torch.float32}"
    """,
    "pure numpy float64": """
        import numpy as np
        a = np.zeros(3, dtype=np.float64)
        b = np.ones(2).astype("float64")
        c = np.float64(1.5)
    """,
    "re.compile": """
        import re
        pattern = re.compile(r"[a-z]+", flags=re.IGNORECASE)
    """,
    "dynamic=True on another library": """
        import torch
        import torchdata
        loader = torchdata.nodes.Loader(dynamic=True)
        model = torch.compile(torch.nn.Linear(2, 2))
    """,
    "padding=True without transformers": """
        import torch
        def encode(texts, padding=True):
            return texts
        out = encode(["a"], padding=True)
    """,
    "a user's own func / nested / distributions / fft": """
        import numpy as np
        func = lambda x: x
        nested = {"a": {"b": 1}}
        distributions = ["normal"]
        spectrum = np.fft.rfft(np.ones(8))
        func(nested)
    """,
    "a method named double with arguments, and an import of a user's vmap": """
        from mylib import vmap
        class Counter:
            def double(self, n):
                return 2 * n
        Counter().double(3)
        vmap(abs)
    """,
    "from_pretrained on a CPU-only file": """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2").to("cpu")
    """,
    "mxfp8 only in a string": """
        import torch
        print("mxfp8 recipes are not used")
        x = torch.ones(2, dtype=torch.bfloat16)
    """,
}


@pytest.mark.parametrize("code", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_look_alikes_are_not_reported(code):
    assert _beta(codes(code)) == []


# ---- precision: one finding per use site, at the use ----------------------------------------


def test_one_finding_per_use_whatever_the_alias():
    code = """
        import torch.sparse as tsp
        from torch import sparse_coo_tensor
        from torch.distributions import Normal as N
        a = sparse_coo_tensor([[0]], [1.0], (1, 1))
        b = tsp.mm(a, a)
        c = N(0.0, 1.0).sample()
        d = N(1.0, 2.0)
    """
    found = run_code(code).findings
    assert [(f.code, f.span.line) for f in found] == [
        ("NM801", 5),
        ("NM801", 6),
        ("NM804", 7),
        ("NM804", 8),
    ]


def test_float64_spellings():
    code = """
        import numpy as np
        import torch
        from transformers import AutoModel
        a = torch.zeros(2, dtype=torch.float64)
        b = torch.zeros(2, dtype=torch.double)
        c = torch.zeros(2).double()
        d = torch.zeros(2, dtype=float)
        e = torch.tensor([1.0], dtype=np.float64)
        torch.set_default_dtype(torch.float64)
        f = AutoModel.from_pretrained("bert-base-uncased", torch_dtype="float64")
        g = torch.DoubleTensor(2)
        if a.dtype == torch.float64:
            pass
    """
    found = [(f.code, f.span.line) for f in run_code(code).findings if f.code == "NM806"]
    assert found == [("NM806", line) for line in range(5, 14)]


def test_float64_fix_is_unsafe_and_skips_comparisons():
    code = """
        import torch
        x = torch.zeros(2, dtype=torch.float64)
        same = x.dtype == torch.float64
        y = x.double()
    """
    assert fixed(code, select=("NM806",)) == textwrap.dedent(code)
    assert fixed(code, select=("NM806",), unsafe=True) == textwrap.dedent(
        """
        import torch
        x = torch.zeros(2, dtype=torch.float32)
        same = x.dtype == torch.float64
        y = x.float()
        """
    )


def test_from_import_float64_gets_torch_imported():
    code = """
        from torch import float64, zeros
        x = zeros(2, dtype=float64)
    """
    out = fixed(code, select=("NM806",), unsafe=True)
    assert "dtype=torch.float32" in out and "import torch\n" in out
    compile(out, "<fixed>", "exec")


def test_dynamic_true_becomes_false_only_with_unsafe_fixes():
    code = """
        import torch
        m = torch.compile(torch.nn.Linear(2, 2), backend="neuron", dynamic=True)
    """
    assert fixed(code, select=("NM809",)) == textwrap.dedent(code)
    assert "dynamic=False)" in fixed(code, select=("NM809",), unsafe=True)


def test_padding_rules_need_transformers_and_respect_buckets():
    code = """
        from transformers import AutoTokenizer, DataCollatorForSeq2Seq, DataCollatorWithPadding
        tok = AutoTokenizer.from_pretrained("t5-small")
        a = tok(["x"], padding=True)
        b = tok(["x"], padding="longest")
        c = tok(["x"], padding=True, pad_to_multiple_of=64)
        d = tok(["x"], padding="max_length", max_length=64)
        e = DataCollatorWithPadding(tok)
        f = DataCollatorWithPadding(tok, pad_to_multiple_of=64)
        g = DataCollatorForSeq2Seq(tok, padding=True)
    """
    found = [f.span.line for f in run_code(code).findings if f.code == "NM809"]
    assert found == [4, 5, 8, 10]


def test_torchao_and_mxfp8_are_told_apart():
    code = """
        import torchao
        from torchao.quantization import quantize_, Int8WeightOnlyConfig
        from torchao.prototype.mx_formats import MXLinearConfig
        quantize_(model, Int8WeightOnlyConfig())
        quantize_(model, MXLinearConfig())
        scale = torch.float8_e8m0fnu
    """
    found = [
        (f.code, f.span.line, f.span.column)
        for f in run_code("import torch\n" + textwrap.dedent(code)).findings
    ]
    assert found == [
        ("NM807", 3, 8),  # `import torchao`, used nowhere
        ("NM807", 6, 1),
        ("NM807", 6, 18),
        ("NM807", 7, 1),
        ("NM808", 7, 18),
        ("NM808", 8, 9),
    ]
    ignored = _check("import torch\n" + textwrap.dedent(code), "m.py", ignore=("NM808",))
    assert "NM807" in ignored and "NM808" not in ignored
    # a name NM808 owns is not handed to NM807 when NM808 is off
    assert ignored.count("NM807") == 4


# ---- NM810: the neuron-async-load condition ---------------------------------------------------

HF = """
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
"""


@pytest.mark.parametrize(
    ("tail", "reported"),
    [
        ('model.to("neuron")\n', True),
        ('x = torch.ones(2, device="neuron:1")\n', True),
        ('model = model.to(torch.device("cuda"))\n', False),
        ('print("neuron")\n', True),  # a bare "neuron" literal is taken as the device name
        ('print("runs on neuron devices")\n', False),
    ],
)
def test_nm810_needs_the_neuron_device(tail, reported):
    found = codes(HF + tail)
    assert found.count("NM810") == (1 if reported else 0)


def test_nm810_not_when_async_load_is_already_off():
    code = 'import os\nos.environ["HF_DEACTIVATE_ASYNC_LOAD"] = "1"\n' + HF + 'model.to("neuron")\n'
    assert "NM810" not in codes(code)
    code = (
        'import os\nos.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")\n'
        + HF
        + 'model.to("neuron")\n'
    )
    assert "NM810" not in codes(code)


def test_nm810_on_a_legacy_xla_file_follows_the_target():
    code = "import torch_xla.core.xla_model as xm\n" + HF + "model.to(xm.xla_device())\n"
    assert "NM810" in codes(code)
    assert "NM810" not in codes(code, target="cpu")


@pytest.mark.parametrize(
    "code",
    [
        "from torch import (\n    nn,\n    func,\n)\ny = func.grad(f)\n",
        "import torch\ny = torch.func.grad(f)\n",
        "import torch\nx = torch.zeros(2, dtype=float)\n",
        'from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained("g")\nb = t(["a"], padding = "longest")\n',
    ],
)
def test_prefilter_keeps_files_the_pack_reports(code):
    """The pack's own triggers (rarer than `grad` or `dtype`) still let these files through."""
    assert _beta(codes(code, dedent=False))


def test_prefilter_skips_a_plain_training_step():
    s = Settings(root=REPO, select=("NM8",))
    job = Job(enabled_rules(s), s, Options())
    text = "import torch.nn.functional as F\nloss = F.mse_loss(y, t)\nopt.zero_grad()\nloss.backward()\n"
    assert not job.ruleset_for("train.py").wants(text.encode())
