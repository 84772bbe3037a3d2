"""What a fix writes is tidy and parses on every supported Python (issue 12, item 8)."""

from __future__ import annotations

import ast

from tests.conftest import codes, fixed, run_code


def test_template_quotes_inside_an_fstring_use_the_other_quote():
    out = fixed(
        """
        import torch_xla.core.xla_model as xm
        print(f"rank {xm.get_ordinal()}: ok")
        print(f'rank {xm.get_ordinal()}: ok')
        """
    )
    assert "print(f\"rank {int(os.environ.get('RANK', 0))}: ok\")" in out
    assert "print(f'rank {int(os.environ.get(\"RANK\", 0))}: ok')" in out
    ast.parse(out, feature_version=(3, 10))


def test_unpacked_argument_tuples_are_written_out():
    out = fixed(
        """
        import torch_xla.distributed.xla_multiprocessing as xmp
        import torch_xla.core.xla_model as xm

        xm.add_step_closure(report, args=(loss, step))
        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=(flags, 2))
        """,
        unsafe=True,
    )
    assert "report(loss, step)" in out
    assert '_mp_fn(int(os.environ.get("LOCAL_RANK", 0)), flags, 2)' in out
    assert "*(" not in out


def test_star_import_names_resolve_and_the_import_goes_when_all_are_rewritten():
    out = fixed(
        """
        from torch_xla.core.xla_model import *

        def log(message):
            if is_master_ordinal():
                print(message)
            return xla_device()
        """,
        target="cpu",
    )
    assert "torch_xla" not in out
    assert 'if int(os.environ.get("LOCAL_RANK", 0)) == 0:' in out
    assert 'return torch.device("cpu")' in out


def test_star_import_stays_while_a_name_may_still_come_from_it():
    source = """
        from torch_xla.core.xla_model import *

        def mark_step():
            pass

        mark_step()
        something_else(xla_device())
        """
    out = fixed(source, target="cpu")
    assert "from torch_xla.core.xla_model import *" in out
    assert "mark_step()" in out  # defined here: not the XLA one
    assert 'something_else(torch.device("cpu"))' in out


def test_a_function_that_imports_torch_itself_gets_no_module_level_import():
    out = fixed(
        """
        def lazy():
            import torch
            import torch_xla.core.xla_model as xm
            return torch.zeros(3, device=xm.xla_device())
        """,
        target="cpu",
    )
    assert out.lstrip().startswith("def lazy():")
    assert "torch_xla" not in out
    assert 'torch.zeros(3, device=torch.device("cpu"))' in out


def test_an_unused_function_local_xla_import_in_try_goes_in_the_same_pass():
    out = fixed(
        """
        import torch

        def get_device():
            try:
                import torch_xla.core.xla_model as xm
                device = xm.xla_device()
            except ImportError:
                device = torch.device("cpu")
            return device
        """,
        target="cpu",
    )
    assert "torch_xla" not in out


def test_a_branch_the_fixes_emptied_goes_when_its_test_has_no_side_effects():
    out = fixed(
        """
        import torch_xla.core.xla_model as xm

        def step(backend, model):
            if backend == "xla":
                xm.mark_step()
            if flush():
                xm.mark_step()
            try:
                xm.mark_step()
            except RuntimeError:
                print("no device")
            return model
        """
    )
    assert 'if backend == "xla"' not in out
    assert "if flush():\n        pass" in out  # the call may do something
    assert "try" not in out and "no device" not in out


def test_continuation_lines_keep_their_shape_inside_a_new_block():
    out = fixed(
        """
        import torch_xla.core.xla_model as xm

        def save(state, path):
            xm.save(
                {
                    "model": state,
                },
                path,
            )
        """,
        unsafe=True,
    )
    assert (
        "        torch.save(tree_map_only(torch.Tensor, torch.Tensor.cpu, {\n"
        '                "model": state,\n'
        "            }), path)\n"
    ) in out


def test_two_rules_insert_helpers_below_the_same_import():
    out = fixed(
        """
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl

        def train(loader, device):
            tracker = xm.RateTracker()
            for batch in pl.MpDeviceLoader(loader, device):
                tracker.add(len(batch))
        """,
        unsafe=True,
    )
    assert "class DeviceLoader:" in out and "class RateTracker:" in out
    assert "tracker = RateTracker()" in out
    assert "for batch in DeviceLoader(loader, device):" in out


def test_a_legacy_module_named_only_in_strings_is_unused_and_its_import_goes():
    """Found in aws-neuron-samples: `"torch_xla" in sys.modules` kept `import torch_xla` in the
    fix while the re-check called it unused and fixable; the finding and the fix must agree."""
    code = """
        import sys

        import torch_xla

        print("torch_xla" in sys.modules)
        """
    assert codes(code).count("NM603") == 1
    out = fixed(code)
    assert "import torch_xla" not in out
    assert '"torch_xla" in sys.modules' in out
    assert not [f for f in run_code(out).findings if f.fix is not None]


def test_a_string_annotation_is_code_its_import_stays_and_its_legacy_name_is_reported():
    """A forward reference (`x: "xm.Foo"`) reads `xm`: removing the import left the annotation
    naming nothing, and the re-check said "All checks passed!" of a file that still names
    torch_xla. The import stays, and the name in the string is reported, with no fix."""
    code = """
        from typing import List

        import torch_xla.core.xla_model as xm
        import torch_xla.debug.metrics as met


        def step(x: "xm.Foo", ys: List["met.Counter"], n: "int") -> "not code (":
            xm.mark_step()
            return x
        """
    found = run_code(code).findings
    in_strings = [f for f in found if f.source_line.startswith("def step")]
    assert sorted(f.code for f in in_strings) == ["NM208", "NM604"]  # metrics, the catch-all
    assert all(f.fix is None for f in in_strings)
    assert "NM603" not in [f.code for f in found]
    out = fixed(code)
    assert "import torch_xla.core.xla_model as xm" in out and "xm.mark_step" not in out
    assert "import torch_xla.debug.metrics as met" in out
    again = run_code(out).findings
    assert sorted(f.code for f in again) == ["NM208", "NM604"]
    assert not [f for f in again if f.fix is not None]


def test_an_import_read_by_its_own_rebinding_is_not_called_unused():
    """Found in pytorch/xla's test_pallas.py: `f = f` under a function's own `from m import f`
    reads the import, which the scopes gave to the assignment: the finding said unused and
    fixable, the fix (which goes by the names code reads) kept it, and a re-check said so again."""
    code = """
        def run(use_dynamo):
            if use_dynamo:
                kernel = make()
            else:
                from torch_xla.experimental.custom_kernel import kernel
                kernel = kernel
            return kernel(1)
        """
    assert "NM603" not in codes(code)
    assert not [f for f in run_code(fixed(code)).findings if f.fix is not None]


def test_an_import_bound_twice_is_not_called_unused_while_its_name_is_read():
    """Found in pytorch/xla's tests: a module-level import shadowed by a second one, or by a
    function's own import, was reported unused and fixable, and the fix (which goes by name)
    kept it. What a re-check calls fixable, a fix must fix."""
    code = """
        import torch, torch_xla
        import torch_xla
        import torch_xla.debug.metrics as met
        import torch_xla.debug.metrics as met


        def enable():
            import torch_xla

            torch_xla.experimental.eager_mode(True)
            return met.metric_data("CompileTime"), torch_xla._XLAC
        """
    assert "NM603" not in codes(code)
    out = fixed(code)
    assert not [f for f in run_code(out).findings if f.fix is not None]
