"""Python files: prefilter -> parse once -> match every rule in one traversal -> findings
(-> fix rounds -> re-parse guard). Text in, results out: the shared shell (checkers/base.py)
does the reading and writing."""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

from neuron_migrate.checkers.base import (
    Job,
    VerifyError,
    covers,
    problem,
)
from neuron_migrate.checkers.textio import Decoded, decode
from neuron_migrate.config.settings import ignored_codes_for
from neuron_migrate.engine.errors import RuleError
from neuron_migrate.engine.ruleset import RuleSet
from neuron_migrate.model import FileResult, Finding, Fix, Span

__all__ = ["PYTHON", "analyze", "check_source", "fix_text"]

UNUSED_IMPORT_KIND = "unused-import"
MAX_FIX_ROUNDS = 4


# ---- analysis -------------------------------------------------------------------------------


@dataclass
class Analysis:
    module: object
    hits: list
    findings: list[Finding]
    # hits that are not suppressed, with the finding each became
    live: list[tuple[object, Finding]]
    # (line, text) of a noqa comment naming a code of ours that is unknown or suppresses nothing
    notes: list[tuple[int, str]] = field(default_factory=list)


def _line_text(lines: list[str], number: int) -> str:
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _replacement(module, hit) -> str | None:
    """The fixed text of the reported node, or None when the edit declines here."""
    import libcst as cst

    from neuron_migrate.engine import edits as actions

    edit = hit.edit
    try:
        if edit.statement_level:
            result = actions.STATEMENT_ACTIONS[edit.action](
                edit.target, edit.params, edit.variables
            )
            if not isinstance(result, list):
                return module.code_for_node(result)
            parts = []
            for item in result:
                if item is actions.KEEP:
                    parts.append(module.code_for_node(edit.target))
                elif isinstance(item, cst.CSTNode):
                    parts.append(module.code_for_node(item).strip("\r\n"))
            return "\n".join(parts)
        new = actions.EXPRESSION_ACTIONS[edit.action](edit.target, edit.params, edit.variables)
        return module.code_for_node(new)
    except actions.Decline:
        return None
    except Exception as exc:  # noqa: BLE001 - named after the rule that asked for it
        raise RuleError(edit.rule, exc) from exc


_BRACKETS = re.compile(r"[()\[\]{}]")
_OPERATOR_CHAIN = re.compile(r"(?:[-+~]\s*){1000}|(?:\bnot\s+){1000}")
# Measured with LibCST 1.9 on CPython 3.11 (tests/test_trust.py, "one file cannot take the run
# down"): its native parser crashes the process (SIGSEGV, it does not raise) from about 1,200
# levels of nested brackets, 3,500 nested lambdas, 5,800 chained attributes and 6,800 terms of
# `a and b and ...`; LibCST's own visitors give up (RecursionError) from about 300-400 levels;
# a 4,000-term chain takes seconds to parse. CPython refuses more than 200 nested brackets.
# So code deeper than MAX_DEPTH levels, counted as LibCST nests them (`a and b and c` is two
# levels, not one as in Python's tree), never reaches LibCST: it could not be checked anyway.
# Code deeper than PROBE_DEPTH is parsed first in a process of its own, which may die.
MAX_BRACKET_DEPTH = 200
MAX_DEPTH = 500
PROBE_DEPTH = 100
TOO_DEEP = "too deeply nested to parse"
PARSER_LIMIT = (
    "too deeply nested for LibCST, the parser neuron-migrate reads code with "
    "(Python itself accepts it); not checked"
)
# a node on one line spanning fewer characters than this is not deep enough to matter
_SHORT = 200


def _ast_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        # SyntaxWarning for "\d" and the like (Python 3.12+): the user's business, not ours
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _tree_depth(tree: ast.AST, limit: int) -> int:
    """How deep the tree is as LibCST nests it, up to `limit`. Subtrees too short to be deep
    are not entered, so this costs a small part of the parse."""
    stack = [(tree, 1)]
    deepest = 1
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        # LibCST nests `a and b and c` as ((a and b) and c); Python keeps one flat node
        step = len(node.values) if isinstance(node, ast.BoolOp) else 1
        for child in ast.iter_child_nodes(node):
            end = getattr(child, "end_col_offset", None)
            if (
                end is not None
                and child.lineno == child.end_lineno
                and end - child.col_offset < _SHORT
            ):
                continue
            stack.append((child, depth + step))
    return deepest


def _text_nesting_problem(text: str) -> str | None:
    """The same question without a syntax tree (Python 2 code, or syntax newer than this
    Python): brackets counted in the raw text, and long chains of unary operators."""
    depth = deepest = 0
    for found in _BRACKETS.finditer(text):
        if found.group() in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_BRACKET_DEPTH:
                    return f"{TOO_DEEP} (more than {MAX_BRACKET_DEPTH} levels of brackets)"
        elif depth:
            depth -= 1
    if _OPERATOR_CHAIN.search(text):
        return f"{TOO_DEEP} (a chain of more than 1000 unary operators)"
    return None


@dataclass(frozen=True)
class Nesting:
    # why the text must not reach LibCST, or None
    problem: str | None
    # deep enough that the parse goes to a process of its own first
    risky: bool = False
    # Python's own syntax tree of the text, when it parsed (positions.node_spans reads where
    # statements start from it)
    tree: ast.Module | None = field(default=None, compare=False, repr=False)


def measure_nesting(text: str) -> Nesting:
    """How deep the text nests, measured by Python's own parser (ten times faster than
    LibCST's) when it takes the text, else by counting brackets."""
    try:
        tree = _ast_parse(text)
    except (RecursionError, MemoryError):
        return Nesting(f"{TOO_DEEP} (Python's own parser gives up on it too)")
    except SyntaxError as exc:
        if "too many nested parentheses" in str(exc.msg):
            return Nesting(f"{TOO_DEEP} (more than {MAX_BRACKET_DEPTH} levels of brackets)")
        if "too complex" in str(exc.msg):
            return Nesting(TOO_DEEP)
        problem = _text_nesting_problem(text)
        return Nesting(problem, risky=problem is None and len(text) > 100_000)
    except ValueError:  # NUL bytes (decode() refuses them before this)
        return Nesting(_text_nesting_problem(text))
    depth = _tree_depth(tree, MAX_DEPTH)
    if depth > MAX_DEPTH:
        return Nesting(f"{PARSER_LIMIT} (more than {MAX_DEPTH} levels)")
    return Nesting(None, risky=depth > PROBE_DEPTH, tree=tree)


_PROBE = "import sys, libcst; libcst.parse_module(sys.stdin.buffer.read().decode('utf-8'))"


_probed: dict[int, str | None] = {}


def parser_survives(text: str) -> str | None:
    """Parse the text with LibCST in a process of its own: None when that process lived,
    else how it died (the name of the signal). Each text once (the fix loop parses again)."""
    key = hash(text)
    if key not in _probed:
        if len(_probed) > 64:
            _probed.clear()
        _probed[key] = _probe(text)
    return _probed[key]


def _probe(text: str) -> str | None:
    import signal
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            input=text.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return "it ran for more than ten minutes"
    except OSError:
        return None  # no process to spare: parse here, as without the probe
    if done.returncode >= 0:
        return None
    try:
        return signal.Signals(-done.returncode).name
    except ValueError:
        return f"signal {-done.returncode}"


def load_engine() -> None:
    """Import what checking Python imports at its first file: LibCST's native parser, the
    engine's modules (for a process about to fork workers that would each import them)."""
    from libcst import native  # noqa: F401

    from neuron_migrate.engine import edits, fixer, matcher, noqa, positions, scopes  # noqa: F401


def analyze(text: str, path: str, job: Job, ruleset: RuleSet) -> Analysis:
    import libcst as cst

    from neuron_migrate.engine.matcher import Matcher, TooDeep
    from neuron_migrate.engine.noqa import exempt, file_exemptions, suppresses
    from neuron_migrate.engine.positions import node_spans
    from neuron_migrate.engine.scopes import collect_imports

    nesting = measure_nesting(text)
    if nesting.problem is not None:
        raise RecursionError(nesting.problem)
    if nesting.risky:
        died = parser_survives(text)
        if died is not None:
            raise RecursionError(
                f"the parser crashed on this file ({died}): LibCST, the parser neuron-migrate "
                "reads code with, cannot take it; not checked"
            )
    module = cst.parse_module(text)
    table = collect_imports(module)
    matcher = Matcher(module, table, ruleset, job.target, job.settings.flags())
    try:
        matcher.run()
    except TooDeep:
        # nested deeper than ordinary code: LibCST's own traversal, from scratch (the walk
        # counted uses of the imports), which gives up where it always did
        table = collect_imports(module)
        matcher = Matcher(module, table, ruleset, job.target, job.settings.flags())
        module.visit(matcher)
    hits = matcher.hits
    spans = node_spans(
        module,
        [h.node for h in hits],
        text=text,
        tree=nesting.tree,
        near=[h.statements for h in hits],
    )
    lines = text.splitlines()
    findings: list[Finding] = []
    live = []
    exempted = file_exemptions(text)
    reported: set[tuple[int, str]] = set()
    for hit in hits:
        span = spans.get(id(hit.node), Span(1, 1, 1, 1))
        reported.update({(span.line, hit.rule.code), (span.end_line, hit.rule.code)})
        if exempt(exempted, hit.rule.code):
            continue
        first, last = _line_text(lines, span.line), _line_text(lines, span.end_line)
        if suppresses(first, hit.rule.code) or suppresses(last, hit.rule.code):
            continue
        fix = None
        if hit.edit is not None:
            replacement = _replacement(module, hit)
            if replacement is not None:
                fix = Fix(hit.pattern.safety, replacement)
        finding = Finding(
            path=path,
            code=hit.rule.code,
            name=hit.rule.name,
            severity=hit.rule.severity,
            message=hit.message,
            span=span,
            fix=fix,
            source_line=first,
        )
        findings.append(finding)
        live.append((hit, finding))
    findings.sort(key=Finding.sort_key)
    notes = noqa_notes(text, lines, reported, ruleset, job) if "noqa" in text.lower() else []
    return Analysis(module, hits, findings, live, notes)


def noqa_notes(
    text: str, lines: list[str], reported: set[tuple[int, str]], ruleset: RuleSet, job: Job
) -> list[tuple[int, str]]:
    """ruff's RUF100 for this tool's codes, as warnings: a `# noqa: NM...` that names no rule,
    or an enabled rule that reports nothing on that line."""
    from neuron_migrate.engine.noqa import line_codes

    known = {r.code for r in job.universe}
    enabled = {r.code for r in ruleset.rules}
    notes = []
    for number, line in enumerate(lines, start=1):
        for code in line_codes(line):
            if code not in known:
                notes.append((number, f"`# noqa: {code}` names no rule of neuron-migrate"))
            elif code in enabled and (number, code) not in reported:
                notes.append((number, f"`# noqa: {code}` is unused: {code} reports nothing here"))
    return notes


def legacy_import_names(job: Job, relative: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The imports a fix removes once nothing uses them: those of every pack's unused-import
    rule, unless the user switched that rule off (ignoring the xla pack's unused-import rule
    keeps torch_xla imports); and the codes of those rules (a `# noqa` naming one keeps the
    import)."""
    ignored = job.settings.ignore + ignored_codes_for(job.settings, relative)
    names: list[str] = []
    codes: list[str] = []
    enabled = {rule.code for rule in job.rules}
    for rule in job.universe:
        if any(covers(sel, rule) for sel in ignored):
            continue
        if not rule.default and rule.code not in enabled:
            continue  # an opt-in pack cleans its imports only when it is on
        for pattern in rule.patterns:
            if pattern.kind == UNUSED_IMPORT_KIND:
                names.extend(pattern.names)
                codes.append(rule.code)
    return tuple(names), tuple(dict.fromkeys(codes))


def fix_text(
    text: str, path: str, job: Job, ruleset: RuleSet, relative: str | None = None
) -> tuple[str, int, Analysis, dict[str, str]]:
    """Apply fixes until none is left (a few rounds at most). Returns the new text, the number
    of findings fixed, the analysis of the new text and the companion modules the applied fixes
    import (name -> source)."""
    from neuron_migrate.engine import fixer

    legacy, noqa_codes = legacy_import_names(job, relative or path)
    analysis = analyze(text, path, job, ruleset)
    fixed = 0
    companions: dict[str, str] = {}
    for _ in range(MAX_FIX_ROUNDS):
        chosen = [hit for hit, finding in analysis.live if job.options.wants_fix(finding)]
        if not chosen:
            break
        editing = [h for h in chosen if h.pattern.kind != UNUSED_IMPORT_KIND]
        new_module, applied, _declined = fixer.apply(analysis.module, editing, legacy, noqa_codes)
        for edit in applied:
            if "companion" in edit.params:
                name, source = edit.params["companion"]
                companions.setdefault(name, source)
        if not editing:
            new_module, _ = fixer.clean_imports(analysis.module, legacy, noqa_codes=noqa_codes)
        new_text = new_module.code
        if new_text == text:
            break
        fixed += len(chosen)
        text = new_text
        analysis = analyze(text, path, job, ruleset)
        if job.options.only is not None:
            break  # the chosen findings' positions name nothing in the new text
    return text, fixed, analysis, companions


def check_source(
    text: str, path: str, job: Job, relative: str | None = None, prefiltered: bool = False
) -> FileResult:
    """Check (and with fix/diff options, fix) source text. No file I/O. `prefiltered`: the
    caller already ran the byte prefilter on this text."""
    ruleset = job.ruleset_for(relative if relative is not None else path)
    result = FileResult(path=path, original_source=text)
    if not prefiltered and not ruleset.wants(text.encode("utf-8", "surrogatepass")):
        return result
    failed: list[str] = []
    while True:
        try:
            return _check_source(text, path, job, relative, ruleset, result)
        except RuleError as exc:
            # one rule failed on this file: report it, and run the others without it
            failed.append(f"rule {exc.code} failed ({exc})")
            rules = tuple(r for r in ruleset.rules if r.code != exc.code)
            if len(rules) == len(ruleset.rules):
                raise
            ruleset = RuleSet.build(rules, universe=job.universe)
            result.error = (
                "internal error: "
                + "; ".join(failed)
                + "; the other rules still ran on this file; please report it with this file"
            )
            result.fixed_source = None


def _check_source(
    text: str, path: str, job: Job, relative: str | None, ruleset: RuleSet, result: FileResult
) -> FileResult:
    import libcst as cst

    from neuron_migrate.engine.fixer import FixError

    try:
        if job.options.rewrites:
            new_text, fixed, analysis, companions = fix_text(
                text, path, job, ruleset, relative or path
            )
            if new_text != text:
                _verify(text, new_text)
                result.fixed_source = new_text
                result.applied = fixed
                result.companions = companions
        else:
            analysis = analyze(text, path, job, ruleset)
        result.findings = analysis.findings
        result.warnings = [f"{path}:{line}: {note}" for line, note in analysis.notes]
    except cst.ParserSyntaxError as exc:
        result.findings = [_syntax_problem(text, path, exc)]
    except RecursionError as exc:
        reason = str(exc)
        if not reason.startswith((TOO_DEEP, "the parser crashed")):
            # LibCST's visitors gave up on code that Python and LibCST's parser took
            reason = PARSER_LIMIT
        result.findings = [problem(path, reason)]
    except FixError as exc:
        result.error = f"not fixed: {exc}"
        result.findings = analyze(text, path, job, ruleset).findings
    return result


def _syntax_problem(text: str, path: str, exc) -> Finding:
    """A file LibCST cannot parse. Python's own parser says where the error is when it finds
    one too (LibCST often points past it); when Python takes the code, the parser is the
    limit, not the code."""
    where = Span(exc.raw_line, exc.raw_column + 1, exc.raw_line, exc.raw_column + 1)
    try:
        _ast_parse(text)
    except SyntaxError as error:
        if error.lineno:
            column = max(1, error.offset or 1)
            where = Span(error.lineno, column, error.lineno, column)
        return problem(path, f"syntax error: {error.msg}", where)
    except (ValueError, RecursionError, MemoryError):
        return problem(path, f"syntax error: {exc.message}", where)
    return problem(
        path,
        "LibCST, the parser neuron-migrate reads code with, cannot read this code, though "
        f"Python accepts it ({exc.message}); not checked",
        where,
    )


def _verify(old: str, new: str) -> None:
    """The fixed code must parse (with this Python's own parser, when the original did)."""
    import libcst as cst

    try:
        cst.parse_module(new)
    except cst.ParserSyntaxError as exc:
        raise VerifyError(f"fixed code does not parse: {exc.message}") from None
    try:
        _ast_parse(old)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    try:
        _ast_parse(new)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise VerifyError(f"fixed code does not parse: {exc.msg}") from None


class PythonKind:
    """.py and .pyi files."""

    name = "python"

    def wants(self, data: bytes, job: Job, relative: str) -> bool:
        # a binary file named .py is worth saying (decode() calls it NM000), trigger word or not
        return b"\x00" in data or job.ruleset_for(relative).wants(data)

    def decode(self, data: bytes) -> Decoded:
        return decode(data)

    def check_text(self, text: str, path: str, job: Job, relative: str) -> FileResult:
        return check_source(text, path, job, relative, prefiltered=True)


PYTHON = PythonKind()
