"""Runs one kata's hidden checks against a file and returns a structured result (data first)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from checker.state import workspace
from checker.sandbox import boundary, processes, rules
from checker import kit as kitmod
from checker.catalogue import Kata
from checker.lang import joined, read_catalogue, reason, t, tr, values
from checker.catalogue import SOLUTIONS, load_solution  # noqa: F401 - load_solution: engine.load_solution for tests
from checker.results import STAGES, CheckResult, KataResult
from checker.errors import Crashed, Timeout, UserError, message_of
from checker.sandbox.parent import DEFAULT_MEMORY_GB, Sandbox, returned_other
from checker.sandbox.child import warm as sandbox_warm

# Parent and child stay single-threaded: forking after OpenMP has started threads can hang the
# child, and one thread each makes the user's time and the reference's time comparable.
torch.set_num_threads(1)

DEFAULT_TIMEOUT = 10.0  # seconds for one call into the user's code


_meta_runs = 0  # checks in this process whose user code may run on the meta device (the device check)


def warm_up() -> None:
    """Import in this process what the first check would otherwise import in every forked child.

    The device check runs the user's code on the meta device, whose first use imports torch's
    meta kernels (about 1 s). A long-lived process (watch, drill) calls this once at start; a single
    check's child imports them in the background instead (Sandbox(warm=True)).
    """
    sandbox_warm()


def check_file(kata: Kata, path: Path, *, timeout: float = DEFAULT_TIMEOUT, show_weights: bool = False,
               memory_gb: float = DEFAULT_MEMORY_GB, fail_fast: bool = False, strict: bool = False,
               timed: bool = True) -> KataResult:
    """Run every hidden check of kata on path.

    show_weights: attach the attention map even if masking passed.
    fail_fast: stop at the first failing check and skip timing (a verdict, not a report: mutation tests).
    strict: accepted variants and follow-up questions fail, as core checks do (the full contract).
    timed: time the user's code and the reference on the kata's timing case (a third of a check's time; the
    project's tests of verdicts leave it out).
    The result's titles and messages are messages (checker.lang.Message): checker.app.report draws them in the
    reader's language. As text they read in the language spoken while checking.
    """
    read_catalogue(kata.checks_module)
    return _check_file(kata, path, timeout, show_weights, memory_gb, fail_fast, strict, timed)


def _check_file(kata, path, timeout, show_weights, memory_gb, fail_fast, strict, timed) -> KataResult:
    started = time.perf_counter()
    result = KataResult(kata.id, kata.track, str(path), "error")
    try:
        # Read once: the user may save (or delete) the file while the check runs.
        source = workspace.read_source(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        result.error = t("{path} does not exist. `kata init` puts a fresh stub back.", path=path)
    except (OSError, workspace.WorkspaceError) as err:
        result.error = message_of(err)
    else:
        _run(kata, path, source, timeout, result, show_weights, memory_gb, fail_fast, strict, timed)
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def _run(kata: Kata, path: Path, source: str, timeout: float, result: KataResult, show_weights: bool,
         memory_gb: float, fail_fast: bool, strict: bool, timed: bool) -> None:
    spec = importlib.import_module(kata.checks_module)
    checks = [v for v in vars(spec).values() if callable(v) and hasattr(v, "stage") and hasattr(v, "english")]
    opts = kitmod.options(spec)
    checks += kitmod.standard_checks(spec) if opts.OUTPUTS is not None else []
    twice = kitmod.same_object_check(spec)  # a function kata handed a model or an optimizer
    checks += [twice] if twice else []
    checks.sort(key=lambda fn: STAGES.index(fn.stage))  # stable: file order inside a stage
    checks += forbidden_checks(kata, source)
    checks.append(stays_inside)
    checks.append(kitmod.world_check(source))
    # The device check runs the user's code on the meta device, when the code may make a tensor
    # itself: the child imports the meta kernels meanwhile.
    makes_tensors = rules.makes_tensors(source)
    warm = opts.DEVICE and makes_tensors and spec.__name__.startswith("checker.checks.torch_")
    global _meta_runs
    _meta_runs += warm
    if _meta_runs > 1 and processes.start_method() == "fork":
        warm_up()  # several such checks in one process (--all): paid once here, inherited by every child
    with Sandbox(path, timeout, memory_gb, warm=warm) as sandbox:
        try:
            if kata.forbidden:
                sandbox.request("trap", names=list(kata.forbidden))
            sandbox.request("load")
        except UserError as err:
            result.status = "not_started" if err.not_implemented else "error"
            result.error = err.traceback or err  # a message of kata's (the memory limit) is drawn where shown
            result.output = sandbox.output()
            return
        except (Timeout, Crashed) as err:
            result.status = "timeout" if isinstance(err, Timeout) else "error"
            result.error = t("while importing your file: {error}", error=err)
            result.output = sandbox.output()
            return
        kit = kitmod.Kit(spec, sandbox, load_solution(kata), makes_tensors=makes_tensors, source=source,
                          error_model=not fail_fast)
        result.status = _run_checks(checks, kit, result, fail_fast, strict)
        if result.status in ("pass", "fail") and opts.CASES and timed and not fail_fast:
            try:
                kit.time(opts.TIMING or opts.CASES[-1])
            except Exception:  # noqa: BLE001 - code that cannot run the timing case simply has no time
                kit.user_seconds = kit.reference_seconds = None
        masking_failed = any(c.stage == "masking" and c.status == "fail" for c in result.checks)
        if opts.SHOW_WEIGHTS and (show_weights or masking_failed) and result.status != "timeout":
            result.weights = _weights_map(kit, spec)
        # A named mistake wins over a class of them. A file that passes names none: the error model may have run on a
        # comparison before the file was found to follow an accepted convention (AWQ's range beside GPTQ's).
        result.diagnosis = None if result.status == "pass" else kit.diagnosis or kit.general_diagnosis
        result.line = _line_named(result.diagnosis)
        result.output = sandbox.output()
        result.user_seconds = kit.user_seconds
        result.reference_seconds = kit.reference_seconds
    result.stage = result.last_stage_passed()


def _weights_map(kit, spec) -> dict | None:
    """The user's and the reference's attention weights of batch 0, head 0 on the kata's mask case."""
    case_index, output_index = spec.SHOW_WEIGHTS
    c = spec.CASES[case_index]
    try:
        user = kitmod.as_outputs(kit.user(kit.inputs(c), case=c), spec.OUTPUTS)[output_index]
        expected = kitmod.as_outputs(kit.reference(kit.inputs(c), case=c), spec.OUTPUTS)[output_index]
    except Exception:  # noqa: BLE001 - no map is better than a broken report
        return None
    if not hasattr(user, "shape") or tuple(user.shape) != tuple(expected.shape) or user.ndim < 2:
        return None
    while user.ndim > 2:
        user, expected = user[0], expected[0]
    return {"case": c.label, "user": user.tolist(), "expected": expected.tolist()}


def forbidden_checks(kata: Kata, source: str) -> list:
    """The kata's off-limits shortcuts: found in the source, and trapped when called."""
    if not kata.forbidden:
        return []
    listed = ", ".join(kata.forbidden)
    lines = source.splitlines()

    def column(line: int, name: str) -> int | None:
        """Where on its line the off-limits name is used (its last part: F.softmax for torch.nn.functional.softmax)."""
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        at = text.find(name.rpartition(".")[2])
        return at + 1 if at >= 0 else None

    @kitmod.check("hygiene", "uses no off-limits shortcut in the source")
    def in_source(kit):
        found = rules.scan(source, kata.forbidden)
        if found:
            uses = joined("; ", (t("line {line}: uses {name}", line=line, name=name) for line, name in found))
            raise kitmod.Fail(t("{uses}, which is off limits in this kata (off limits: {listed})", uses=uses,
                                listed=listed), _off_limits(), general=True, line=found[0][0],
                              column=column(*found[0]))

    @kitmod.check("hygiene", "calls no off-limits shortcut at run time")
    def at_run_time(kit):
        found = kit.trapped()
        if found:
            calls = joined("; ", (t("line {line}: called {name}", line=line, name=name) for line, name in found))
            raise kitmod.Fail(t("{calls}, which is off limits in this kata: write it yourself", calls=calls),
                              _off_limits(), general=True, line=found[0][0], column=column(*found[0]))

    in_source.static = True  # reads the file, never runs it: passing it is not progress
    at_run_time.static = True
    return [in_source, at_run_time]


@kitmod.check("hygiene", "stays inside kata's sandbox")
def stays_inside(kit):
    """What the boundary refused (checker.sandbox.boundary): a process, a signal, native code, kata's own files or the
    workspace's history and files. Each attempt already raised PermissionError in the user's code."""
    refused = [boundary.says(kind, detail) for what, kind, detail in kit.boundary() if what == "refused"]
    if refused:
        raise kitmod.Fail(t("{attempts}; a kata computes its result from its inputs and needs none of this",
                            attempts=joined("; ", refused)),
                          t("the code reaches outside the kata, and kata's sandbox refused it: remove that part; the "
                            "reference answers and your history stay out of its reach"), general=True)


stays_inside.static = True  # passing it is not progress: an unwritten stub stays inside too


def _off_limits() -> str:  # a function: the sentence is spoken in the language of the run
    return t("the code hands the part this kata asks you to write to a library routine: write that computation "
             "out yourself")


def _run_checks(checks, kit, result: KataResult, fail_fast: bool = False, strict: bool = False) -> str:
    bare: set = set()  # the checks whose message is the crash alone, "your code raised ...", by index
    status = _judged(checks, kit, result, fail_fast, strict, bare)
    _one_message_per_mistake(result, bare)
    return status


def _one_message_per_mistake(result: KataResult, bare: set = frozenset()) -> None:
    """A follow-up question or an accepted variant is raised only while every core check passes: beside a
    failure it is noise about another concept (a question about a query that sees no key, quoting weights
    that exist only because the mask is inverted). A failure that says what an earlier one said but for its
    numbers (float32 failing as float64 did, a masking check finding the shape the shapes check found) folds
    into it. Failures whose code raised the same error, at the same line, on other sizes are one crash, said
    once: by the first check that says more than the error (its cause, what to do), else by the first; it
    points at the line the others knew. bare: the indices of the checks that say the error alone."""
    if all(c.passed or c.kind != "core" for c in result.checks):
        return
    said: dict = {}  # the message's reason (checker.lang.reason) -> the check that said it first
    crashes: list[list[int]] = []  # the failures of one crash, by index: [(error type, line), i, j, ...]
    for i, c in enumerate(result.checks):
        if c.passed or c.skipped or c.kind != "core":
            continue
        key, error = reason(c.message), _error_in(c.message)
        if key in said:
            result.checks[i] = replace(c, status="skipped", line=None, column=None, diagnosis=None,
                                       message=t("skipped: it fails as “{check}” does", check=said[key]))
            continue
        said[key] = c.name  # a message: drawn later in the reader's language
        group = next((g for g in crashes if error and g[0][0] == error and (g[0][1] == c.line or not g[0][1]
                                                                               or not c.line)), None)
        if group is not None:
            group.append(i)
            group[0] = (error, group[0][1] or c.line)
        elif error:
            crashes.append([(error, c.line), i])
    for (_, line), *members in crashes:
        keeper = next((i for i in members if i not in bare), members[0])
        first = result.checks[keeper]
        result.checks[keeper] = replace(first, line=first.line or line)
        for i in members:
            if i != keeper:
                c = result.checks[i]
                result.checks[i] = replace(c, status="skipped", line=None, column=None, diagnosis=None, message=t(
                    "skipped: your code raised the same error as in “{check}”{where}", check=first.name,
                    where=t(" (line {line})", line=c.line) if c.line else ""))
    for i, c in enumerate(result.checks):
        if c.kind != "core" and c.message and not c.skipped:
            result.checks[i] = replace(c, status="skipped", line=None, column=None, diagnosis=None,
                                       message=t("not asked until the failures above are fixed"))


def _error_in(message) -> str | None:
    """The type of the error a failure's message quotes (the user's code raised it), read from its values."""
    return next((value.kind for _, value in values(message) if isinstance(value, UserError)), None)


def _line_named(message) -> int | None:
    """The line of the user's file a message names ("line 18"), read from its values."""
    return next((value for name, value in values(message) if name == "line" and type(value) is int), None)


def _judged(checks, kit, result: KataResult, fail_fast: bool, strict: bool, bare: set) -> str:
    not_implemented = 0
    abort = None
    crashes: dict = {}  # (error, line) -> the first check it failed: the same crash is shown once
    noted = "fail" if strict else "followup"  # an accepted variant or a follow-up: --strict fails it
    for fn in checks:
        check_id = kitmod.id_of(fn)

        def add(status: str, message: str = "", **fields) -> None:
            """One check's result: its English title as its id, the title and message in the language spoken."""
            if status != "skipped":  # a failure is placed where its check places it, else at a line its message names
                fields["line"] = fields.get("line") or _line_named(message)
            result.checks.append(CheckResult(kitmod.title_of(fn), fn.stage, status, message, id=check_id, **fields))

        if fail_fast and any(not c.passed for c in result.checks):
            break
        if abort or (fn.stage != "structure" and any(not c.passed for c in result.checks if c.stage == "structure")):
            add("skipped", abort or t("skipped: fix the structure first"))
            continue
        try:
            fn(kit)
            add("pass")
        except kitmod.FollowUp as note:
            add(noted, note.args[0] if note.args else "", kind=note.kind)  # str() would lose its Message
        except kitmod.Fail as fail:
            if getattr(fn, "followup", False):
                add(noted, fail.message, kind="followup", line=fail.line, column=fail.column,
                    diagnosis=fail.diagnosis or None)
                continue
            add("fail", fail.message, line=fail.line, column=fail.column, diagnosis=fail.diagnosis or None)
            if fail.general:
                kit.general_diagnosis = kit.general_diagnosis or fail.diagnosis
            else:
                kit.diagnosis = kit.diagnosis or fail.diagnosis
        except UserError as err:
            # A crash is a failure, on an edge case too, and is shown once: the checks the same crash stops
            # say so and are folded away (one NameError used to fill eleven checks and the Problems panel).
            not_implemented += err.not_implemented
            where, key = kitmod.at_line(err), (str(err), kitmod.user_line(err))
            if key in crashes:
                add("skipped", t("skipped: your code raised the same error as in “{check}”{where}",
                                 check=crashes[key], where=where))
                continue
            crashes[key] = kitmod.title_of(fn)
            text = (t("not written yet (raises NotImplementedError)") if err.not_implemented
                    else returned_other(err) or t("your code raised {error}", error=err))
            if getattr(fn, "followup", False) and not err.not_implemented:
                text = t("your code raised {error} on this edge case", error=err)
            if isinstance(err.case, kitmod.Case) and not err.not_implemented:  # the input that made it raise
                text = t("{label}: {message}", label=err.case.label, message=text)
            add("fail", text + where, line=kitmod.user_line(err))
            bare.add(len(result.checks) - 1)
            if not err.not_implemented:
                if kit.diagnosis is None:
                    try:
                        kit.rewrite_crash(err)  # the change to the reference that raises the same error, if one does
                    except (Timeout, Crashed):
                        pass  # the case again ran out of time or memory: the crash is said as it is
                kit.general_diagnosis = kit.general_diagnosis or kitmod.crash_diagnosis(err)
            if not err.not_implemented and not result.error:
                result.error = err.traceback
        except Timeout as err:
            add("fail", message_of(err))
            abort, status = t("skipped: the previous check {error}", error=err), "timeout"
        except Crashed as err:
            add("error", message_of(err))
            abort, status = t("skipped: the process running your code died"), "error"
        except Exception as err:  # noqa: BLE001 - a bug in a check must not hide every other verdict
            add("error", t("internal error of this check, please report it: {kind}: {error}", kind=type(err).__name__,
                         error=err))
    if abort:
        return status
    static = {kitmod.id_of(fn) for fn in checks if getattr(fn, "static", False)}
    behavioural = [c for c in result.checks if c.stage != "structure" and c.id not in static]
    if not_implemented and not any(c.passed for c in behavioural):
        return "not_started"
    return "pass" if all(c.passed for c in result.checks) else "fail"


class Replay:
    """One case of a kata rebuilt exactly as the hidden checks build it: seeded inputs, the weights
    loaded into a module, and the reference's outputs, all in float64. `kata check NAME --case N`
    prints a snippet that uses it beside the user's own code:

        case = Replay("attention", 2)
        case.compare(scaled_dot_product_attention(*case.inputs))
    """

    def __init__(self, kata: Kata | str, number: int):
        from checker import catalogue

        self.kata = catalogue.find(kata) if isinstance(kata, str) else kata
        read_catalogue(self.kata.checks_module)
        self.spec = importlib.import_module(self.kata.checks_module)
        opts = kitmod.options(self.spec)
        # every case a report can name: the standard ones and those of a check of its own (kv_cache's case 6)
        cases = {c.id: c for c in opts.CASES}
        for value in vars(self.spec).values():
            for c in value if isinstance(value, list | tuple) else (value,):
                if isinstance(c, kitmod.Case):
                    cases.setdefault(c.id, c)
        if number not in cases:
            raise LookupError(t("{kata} has cases {cases}; there is no case {number}", kata=self.kata.id,
                                cases=", ".join(map(str, sorted(cases))) or "-", number=number))
        self.case = cases[number]
        kit = kitmod.Kit(self.spec, None, load_solution(self.kata))
        try:
            self.target, self.init = self.spec.TARGET, kit.init(self.case)
            self.inputs = kit.inputs(self.case)
        except Exception as err:  # noqa: BLE001 - a case built by its own check, from inputs of another kind
            raise LookupError(t("case {number} of {kata} is built by the one check that uses it, so --case cannot "
                                "rebuild it; the report's message says what that check gave and expected",
                                number=number, kata=self.kata.id)) from err
        self.names = [name for name, _ in opts.OUTPUTS] if opts.OUTPUTS else ["output"]
        self._tol = kit.tolerance("float64")
        reference = getattr(kit.solution, self.target)
        self.is_torch_module = isinstance(reference, type) and issubclass(reference, torch.nn.Module)
        # A NumPy class has no state_dict: its checks set the weights by attribute path.
        self.by_attribute = self.init is not None and not opts.LOAD_STATE and hasattr(self.spec, "weights")
        self.weights = self.spec.weights(self.case, "float64") if self.by_attribute else kit.state(self.case, "float64")
        try:
            if self.by_attribute:
                value = self.assign(reference(**self.init), self.weights).forward(*self.inputs)
            else:
                value = kit.reference(self.inputs, case=self.case)
        except Exception:  # noqa: BLE001 - a kata whose checks call its target in other ways: inputs only
            value = None
        outputs = self._split(value)
        self.expected = outputs if all(_comparable(v) for v in outputs) else None
        called = reference.forward if self.init is not None else reference
        self.parameters = [p for p in inspect.signature(called).parameters if p != "self"][:len(self.inputs)]

    @staticmethod
    def assign(obj, weights: dict):
        """Set each weight by attribute path ("attention.W_q" -> obj.attention.W_q), as the checks do."""
        from checker.checks.child.numpy_classes import set_path

        for path, value in weights.items():
            set_path(obj, path, value.copy())
        return obj

    def _split(self, value) -> tuple:
        if len(self.names) > 1 and isinstance(value, (tuple, list)) and len(value) == len(self.names):
            return tuple(value)
        return (value,)

    def compare(self, got) -> bool:
        """Print, output by output, whether got matches the reference (the checks' own comparison)."""
        if self.expected is None:
            print(t("this kata's checks call it in several ways; compare by hand with the reference"))
            return False
        same = True
        for name, actual, expected in zip(self.names, self._split(got), self.expected):
            if isinstance(expected, list | tuple | str) or expected is None:  # plain data: exactly equal
                same = _same_data(name, actual, expected) and same  # each output says its own verdict
                continue
            if not isinstance(expected, torch.Tensor | np.ndarray):  # a number
                actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
            try:
                kitmod.compare(actual, expected, name, tol=self._tol)
                print(t("{name}: matches the reference", name=name))
            except kitmod.Fail as err:
                print(err)
                same = False
        return same

    def snippet(self) -> str:
        """Python to paste beside the user's file: rebuild the case, call their code, compare."""
        torch_kata = self.kata.track == "torch"
        shown = "; ".join(f"{n} {_layout(v)}" for n, v in zip(self.parameters, self.inputs))
        lines = [f"# kata check {self.kata.id} --case {self.case.id}: {self.case.label}",
                 "# " + tr("Run it in Python started in the folder of your file {file}.",
                          file=Path(self.kata.file).name),
                 *(["import torch"] if torch_kata else []),
                 "from checker.engine import Replay",
                 f"from {Path(self.kata.file).stem} import {self.target}  # " + tr("your code"),
                 "",
                 f"case = Replay({self.kata.id!r}, {self.case.id})  # "
                 + tr("the inputs and weights the hidden checks use (seeded, float64)"),
                 f"{', '.join(self.parameters)}{',' if len(self.parameters) == 1 else ''} = case.inputs  # {shown}"]
        call = self.target
        if self.init is not None:
            literal = all(isinstance(v, int | float | str | bool | type(None)) for v in self.init.values())
            kwargs = ", ".join(f"{k}={v!r}" for k, v in self.init.items()) if literal else "**case.init"
            lines.append(f"model = {self.target}({kwargs})" + (".double().eval()" if self.is_torch_module else ""))
            if self.by_attribute:
                lines.append("case.assign(model, case.weights)  # " + tr("the checks' weights, set by attribute path"))
            elif self.weights:
                lines.append("model.load_state_dict(case.weights)  # " + tr("the reference's weights, by name"))
            call = "model" if self.is_torch_module else "model.forward"
        lines.append(f"got = {call}({', '.join(self.parameters)})")
        if self.expected is not None:
            expected = "; ".join(" ".join(filter(None, (n, _layout(v), _first(v))))
                                 for n, v in zip(self.names, self.expected))
            lines += ["# " + tr("expected: {outputs}", outputs=expected),
                      "case.compare(got)  # " + tr("says, output by output, whether it matches and where it differs")]
        return "\n".join(lines) + "\n"


def _comparable(value) -> bool:
    """A tensor, an array or a number (compared with the checks' tolerance), or plain data (lists of ids,
    merges, hypotheses: compared exactly)."""
    if isinstance(value, list | tuple):
        return all(_comparable(v) for v in value)
    return isinstance(value, torch.Tensor | np.ndarray | int | float | str) or value is None


def _same_data(name: str, actual, expected) -> bool:
    """Print whether plain data equals the reference's, and where it first differs."""
    if actual == expected:
        print(t("{name}: matches the reference", name=name))
        return True
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        at = next((i for i, (a, e) in enumerate(zip(actual, expected)) if a != e), min(len(actual), len(expected)))
        print(t("{name}: differs from item {index} on (length {got}, expected {want}): got {value}, expected {wanted}",
                name=name, index=at, got=len(actual), want=len(expected),
                value=repr(actual[at]) if at < len(actual) else "-", wanted=repr(expected[at]) if at < len(expected) else "-"))
    else:
        print(t("{name}: got {value}, expected {wanted}", name=name, value=repr(actual), wanted=repr(expected)))
    return False


def _layout(value) -> str:
    if isinstance(value, torch.Tensor | np.ndarray):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{tuple(value.shape)} {dtype}"
    if isinstance(value, list | tuple) and value:
        return f"{type(value).__name__} of {len(value)}"
    shown = repr(value)
    return shown if "\n" not in shown and len(shown) <= 40 else type(value).__name__


def _first(value, count: int = 4) -> str:
    """The first few values of an output, to recognise it at a glance."""
    if isinstance(value, list | tuple):  # plain data: its first items
        shown = ", ".join(repr(v) for v in value[:count])
        return "[" + (shown if len(shown) <= 60 else shown[:57] + "...") + (", ...]" if len(value) > count else "]")
    if not isinstance(value, torch.Tensor | np.ndarray):
        return ""
    flat = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value).reshape(-1)[:count]
    more = ", ..." if np.asarray(value.shape).prod() > count else ""
    return "[" + ", ".join(f"{float(x):.4g}" if flat.dtype.kind == "f" else str(x) for x in flat) + more + "]"
