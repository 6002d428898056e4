"""Shared fixtures: the repository's folders and a runner for the real `kata` command."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from checker.sandbox import processes

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "checker" / "checks"  # one folder per kata: TRACK_NAME/


def checker_modules() -> list[Path]:
    """The checker's own Python: not the realistic files each kata keeps (variants/), nor its reference test."""
    return sorted(p for p in CHECKS.parent.rglob("*.py") if p.name != "test_reference.py"
                  and not {"variants", "_katas", "_solutions"} & set(p.parts))


def variant(code: str, name: str) -> Path:
    """A realistic file of a kata: variant("torch_attention", "wrong_missing_scale")."""
    return CHECKS / code / "variants" / f"{name}.py"


def variant_files(prefix: str = "*") -> list[Path]:
    """Every kata's wrong_*.py or right_*.py, in a stable order."""
    return sorted(CHECKS.glob(f"*/variants/{prefix}_*.py"), key=str)


# The sandbox's start methods. fork is refused where torch may see an accelerator (a CUDA, ROCm or XPU
# build): there its tests are skipped, and a test of the refusal itself runs instead.
FORK = pytest.param("fork", marks=pytest.mark.skipif(processes.accelerator(),
                                                      reason="KATA_SANDBOX=fork is refused on this torch build"))
START_METHODS = (FORK, "forkserver", "spawn")


# A private data folder for the whole test session: a test that falls back to the default
# workspace must never touch the real one in the user's home.
_DATA_HOME = tempfile.mkdtemp(prefix="kata-tests-data-")
# No `kata check` of a test starts a workspace's resident checker (a process that keeps torch imported for 15
# minutes): tests/commands/test_server.py starts the ones it tests.
os.environ.setdefault("KATA_NO_SERVER", "1")


# The width a test's `kata` draws at when the test does not ask for one: wide enough that no line a test reads is
# wrapped. A test looks for the words it expects, and where a terminal's width would break them depends on the
# temporary folder's path (a Chinese sentence breaks inside a word: 计时练习 at pytest-7 and not at pytest-6). A test
# of the layout itself asks for its width (COLUMNS=80) and reads the layout, or the data (--json), not the words.
UNWRAPPED = "2000"


def run_kata(*args, cwd=None, env=None, input=None, timeout=300):
    """Run the real CLI in a subprocess, as a user would, its output unwrapped unless env asks for a width."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": UNWRAPPED, "XDG_DATA_HOME": _DATA_HOME,
                "KATA_WORKSPACE": "", **(env or {})}
    return subprocess.run([sys.executable, "-m", "checker", *map(str, args)], cwd=cwd, env=full_env,
                          input=input, capture_output=True, text=True, timeout=timeout)


def run_json(*args, **kw):
    proc = run_kata(*args, "--json", **kw)
    assert proc.stdout.strip(), proc.stderr
    return proc, json.loads(proc.stdout)


@pytest.fixture(scope="session")
def meta_kernels():
    """torch's meta kernels imported once in this process (engine.warm_up, as watch and drill do): every check the
    test forks then inherits them, instead of each child importing them again for its device check (1 s, 3 s
    under load). Modules that check files in-process use it (pytestmark = pytest.mark.usefixtures(...))."""
    from checker import engine

    engine.warm_up()


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    proc = run_kata("init", ws)
    assert proc.returncode == 0, proc.stderr
    return ws


# ----------------------------------------------------------------------------- two tiers
# `pytest -m "not slow"` (the fast tier, about 3 minutes on two cores) runs every kata's reference and stub, one
# wrong and one right variant per kata (tests/checks/test_variants.py marks the others by parametrisation), the CLI
# and the sandbox under this system's first start method; `pytest` (CI) adds what is marked slow here. Each entry is
# a test file, or a file::test, with why it is slow (figures: `pytest --durations=30` at the end of a CI run).
_SERVER = "a resident checker of its own, started and ended around a check"
_ROBUST = "a rare state of the workspace, the terminal or the machine, reproduced around a whole check"
SLOW = {
    # The mutants and the variants past the first: what a change to a kata's checks must still reject.
    "tests/checks/test_mutation.py": "every mutant of every reference: about half the suite's time",
    "tests/checks/test_divergence.py": "the composite katas' residual and wiring mistakes, each a whole check",
    "tests/checks/test_case_snippet.py": "every kata's --case snippet (and wrong ones), each in a Python of its own",
    "tests/checks/test_catalogue.py::test_float32_internals_open_no_door_to_a_named_mistake":
        "every named mistake of every kata, on every case",
    "tests/checks/test_catalogue.py::test_the_scaffold_makes_a_kata_that_runs_and_names_only_what_a_person_must_write":
        "dev new in a copy of the repository, then four checks there",
    "tests/commands/test_parallel.py::test_the_history_of_a_parallel_check_is_the_history_of_one_check_at_a_time":
        "a dozen katas checked twice, in parallel and one at a time",
    "tests/checks/test_edges.py::test_every_edge_value_a_contract_allows_is_drawn_by_some_check":
        "every kata's whole check on its reference, each call of the user's code written down",
    "tests/checks/test_rules.py::test_every_file_that_makes_no_tensor_passes_the_device_check_when_run":
        "the device check on every solution and variant that makes no tensor",
    # The long screens and sessions.
    "tests/commands/test_chinese_reports.py": "kata check --all in Chinese, on a wrong file of every kata",
    "tests/commands/test_live.py": "watch and drill sessions, each minutes of a real session compressed",
    "tests/commands/test_practice.py::test_stats_next_hint_and_list_fit_80_columns_in_both_languages_and_best_means_one_thing":
        "every practice screen at 80 columns, in both languages",
    "tests/commands/test_messages.py::test_stats_and_init_speak_chinese_and_stats_cuts_nothing_at_80_columns":
        "the practice screens in Chinese at 80 columns",
    "tests/commands/test_messages.py::test_a_chinese_report_at_80_columns_wraps_and_cuts_nothing":
        "a report at 80 columns",
    "tests/commands/test_cli.py::test_progress_lines_only_on_a_terminal": "a check in a pseudo-terminal",
    "tests/commands/test_notebook.py::test_a_result_in_ipythons_terminal_shows_as_the_report": "a real IPython",
    "tests/commands/test_notebook.py::test_check_takes_a_class_or_source_and_leaves_the_callers_torch_alone":
        "the notebook's checks in this process, one per way of handing code",
    # Robustness: rare states, each reproduced around a whole check.
    "tests/sandbox/test_boundary.py::test_a_thousand_odd_command_lines_never_end_in_an_internal_error":
        "1,000 seeded command lines",
    "tests/sandbox/test_boundary.py::test_a_damaged_history_is_never_written": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_reader_that_leaves_early_gets_the_verdicts_status": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_closed_or_full_stdout_is_no_internal_error": _ROBUST,
    "tests/sandbox/test_hostile.py::test_concurrent_checks_lose_no_record": _ROBUST,
    # (the fast tier keeps one of each: a crash of the child and an endless loop, tests/commands/test_cli.py)
    "tests/sandbox/test_hostile.py::test_broken_call_is_a_clear_verdict_not_a_pass": "a dozen ways a call can break",
    "tests/sandbox/test_hostile.py::test_broken_import_is_a_clear_verdict": "half a dozen ways an import can break",
    "tests/sandbox/test_hostile.py::test_megabytes_of_output_are_captured_and_cut": _ROBUST,
    "tests/sandbox/test_hostile.py::test_non_utf8_file_is_reported": _ROBUST,
    "tests/sandbox/test_hostile.py::test_deleted_file_is_reported_and_init_restores_it": _ROBUST,
    "tests/sandbox/test_hostile.py::test_corrupt_progress_database_is_reported_and_kept": _ROBUST,
    "tests/sandbox/test_hostile.py::test_read_only_workspace_still_gives_a_verdict": _ROBUST,
    "tests/sandbox/test_platforms.py::test_a_read_only_workspace_is_read_and_every_refusal_says_why": _ROBUST,
    "tests/sandbox/test_platforms.py::test_a_gbk_console_shows_distinct_marks_in_chinese": _ROBUST,
    "tests/sandbox/test_platforms.py::test_no_argument_list_is_an_internal_error": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_daemon_started_past_the_boundary_dies_with_the_check_and_holds_no_pipe":
        _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_file_where_kata_keeps_a_folder_is_said": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_device_a_fifo_or_a_huge_kata_file_is_never_read": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_finished_check_leaves_no_write_ahead_files": _ROBUST,
    "tests/sandbox/test_boundary.py::test_a_symlink_loop_as_workspace_is_said": _ROBUST,
    "tests/commands/test_parallel.py::test_ctrl_c_ends_every_process_a_parallel_check_started": _ROBUST,
    "tests/commands/test_parallel.py::test_a_worker_that_ends_without_its_result_costs_its_kata_nothing": _ROBUST,
    "tests/sandbox/test_hostile.py::test_a_check_killed_midway_leaves_the_database_readable": _ROBUST,
    "tests/sandbox/test_hostile.py::test_locked_database_waits_then_records": _ROBUST,
    "tests/sandbox/test_platforms.py::test_a_console_that_cannot_encode_gets_replacements_not_a_crash": _ROBUST,
    "tests/sandbox/test_platforms.py::test_a_runaway_allocation_gets_one_verdict_with_and_without_a_system_memory_cap":
        _ROBUST,
    "tests/sandbox/test_platforms.py::test_no_sandbox_is_forked_from_a_process_that_ran_backward_with_an_accelerator_visible":
        "a simulated accelerator",
    "tests/sandbox/test_meta_kernels.py::test_the_meta_kernels_say_the_same_without_importing_torch_dynamo":
        "a Python of its own in which torch._dynamo cannot be imported",
    "tests/sandbox/test_meta_kernels.py::test_without_sympy_the_same_kernels_say_the_same_and_the_helpers_answer_as_torchs_own":
        "a Python of its own without sympy",
    "tests/checks/test_diagnoses.py::test_a_change_that_fits_one_case_only_by_its_sizes_is_not_said":
        "a search given ten times its budget, to show what it does not say",
    "tests/sandbox/test_platforms.py::test_a_check_runs_under_spawn_without_resource_termios_fcntl_and_tty":
        "spawn (Windows' start method)",
    "tests/sandbox/test_platforms.py::test_under_spawn_a_clean_child_serves_the_next_kata_and_a_changed_one_does_not":
        "spawn (Windows' start method)",
    "tests/sandbox/test_boundary.py::test_a_child_that_ends_itself_ends_the_daemon_its_user_started":
        "spawn (Windows' start method)",
    "tests/sandbox/test_platforms.py::test_a_child_started_ahead_of_time_outlives_the_moment_it_was_started":
        "spawn (Windows' start method), and a starting thread held back for 6 s",
    # The workspace's resident checker: each of these starts a server of its own (torch imported again).
    "tests/commands/test_server.py::test_warm_and_cold_verdicts_agree_on_every_reference_and_a_wrong_file_of_every_kata":
        "every kata checked warm and cold, its reference (then on two cores too) and a wrong file",
    "tests/commands/test_server.py::test_a_server_killed_during_a_check_leaves_a_cold_verdict_and_a_complete_history":
        _SERVER,
    "tests/commands/test_server.py::test_the_server_restarts_when_a_file_of_the_package_changes": _SERVER,
    "tests/commands/test_server.py::test_the_server_exits_when_its_workspace_is_deleted": _SERVER,
    "tests/commands/test_server.py::test_under_spawn_windows_start_method_a_warm_check_gives_the_cold_verdict":
        _SERVER,
    "tests/commands/test_server.py::test_eight_clients_at_once_on_one_server_lose_nothing": _SERVER,
    "tests/commands/test_server.py::test_the_notebooks_check_and_cell_go_to_the_server_with_the_cold_verdict_and_history":
        _SERVER,
}


def _slow(item) -> bool:
    """Marked slow: listed in SLOW; a screen driven in a real terminal (tmux, the `term` fixture) or a check in a
    real Jupyter kernel (the `notebook` fixture); a sandbox test
    under a start method other than the first this system has (fork on Linux: forkserver and spawn, macOS's and
    Windows', are held in the slow tier, and run first where fork is refused)."""
    path = item.nodeid.split("::")[0]
    if path in SLOW or f"{path}::{getattr(item, 'originalname', None) or item.name}" in SLOW:
        return True
    if {"term", "notebook"} & set(getattr(item, "fixturenames", ())):  # tmux, or a Jupyter kernel
        return True
    method = getattr(item, "callspec", None) and item.callspec.params.get("method")
    return method in ("forkserver", "spawn") and not processes.accelerator()


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: one worker more than the cores this process may use, for the whole suite; one per core for the fast
    tier (`-m "not slow"`). The slow tier waits a good part of its time on other processes (a server starting, a
    screen redrawn, a child killed and reaped), and a third worker fills two cores there: the whole suite took 15 min
    26 s with three workers against 16 min 37 s with two, in one checkout on an idle 2-core machine. The fast tier
    waits little, and a third worker only adds its own start and the switching: 2 min 58 s with two against 3 min
    20 s with three, one after the other on an idle 2-core machine."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return cores if (config.getoption("markexpr", "") or "").replace(" ", "") == "notslow" else cores + 1


# The tests that check the whole catalogue through the CLI, 30 s to 2½ minutes each (CI's --durations=30), longest
# first
WHOLE_CATALOGUE = ("test_warm_and_cold_verdicts_agree_on_every_reference_and_a_wrong_file_of_every_kata",
                   "test_a_chinese_report_holds_no_english_word_outside_code_names_and_numbers")


def pytest_collection_modifyitems(items):
    """Marks the slow tier (SLOW, _slow), then orders the longest tests first: the whole-catalogue checks, then the
    mutants of each kata, the largest reference first. Under pytest -n a worker then never starts two minutes of
    one test when the others have finished."""
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)

    def weight(item):
        if getattr(item, "originalname", None) in WHOLE_CATALOGUE:
            return -2**40 + WHOLE_CATALOGUE.index(item.originalname)
        kata = getattr(item, "callspec", None) and item.callspec.params.get("kata")
        if item.originalname != "test_every_behaviour_changing_mutant_is_rejected" or kata is None:
            return 0
        return -(ROOT / "solutions" / kata.file).stat().st_size

    items.sort(key=weight)  # stable: the rest keep their order


# ----------------------------------------------------------------------------- figures of the whole run
# Tests report their figures as user properties of their report; these hooks run where the reports are
# collected (the main process, also under pytest -n), so the figures add up over every worker.
#   ("variant", (kata folder, diagnosed, pointed))  tests/checks/test_variants.py, one per wrong variant
#   ("kill", (kata, killed, total))                  tests/checks/test_mutation.py, one per part of a kata's mutants
_FIGURES: dict[str, dict[str, list[int]]] = {"variant": {}, "kill": {}}
DIAGNOSED_AT_LEAST, POINTED_AT_LEAST = 0.90, 1.0  # issue 16's bounds on the project's own wrong variants


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name in _FIGURES:
            key, *counts = value
            if name == "variant":  # one wrong variant: ran, diagnosed, pointed
                counts = (1, *counts)
            row = _FIGURES[name].setdefault(key, [0] * len(counts))
            for i, count in enumerate(counts):
                row[i] += count


def pytest_sessionfinish(session, exitstatus):
    """The bound on diagnoses, once every wrong variant ran (a run of some of them cannot judge it)."""
    rows = _FIGURES["variant"].values()
    ran = sum(n for n, _, _ in rows)
    if not ran or ran < len(variant_files("wrong")):
        return
    diagnosed, pointed = sum(d for _, d, _ in rows), sum(p for _, _, p in rows)
    if diagnosed < DIAGNOSED_AT_LEAST * ran or pointed < POINTED_AT_LEAST * ran:
        session.config._kata_bound_missed = (f"the wrong variants are below their bound: {diagnosed} of {ran} "
                                             f"diagnosed (at least {DIAGNOSED_AT_LEAST:.0%}), {pointed} pointed "
                                             f"(at least {POINTED_AT_LEAST:.0%})")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    _diagnosis_rates(terminalreporter)
    _kill_rates(terminalreporter)
    missed = getattr(config, "_kata_bound_missed", None)
    if missed:
        terminalreporter.section("bound missed", red=True)
        terminalreporter.write_line(missed, red=True)


def _diagnosis_rates(terminalreporter):
    """Per kata, the share of wrong variants diagnosed and named."""
    figures = _FIGURES["variant"]
    if not figures:
        return
    terminalreporter.section("wrong variants: diagnosed, pointed")
    terminalreporter.write_line(f"{'kata':32} {'n':>4} {'diagnosed':>11} {'pointed':>11}")
    for kata, (n, d, p) in sorted(figures.items()):
        terminalreporter.write_line(f"{kata:32} {n:4} {d:4} {100 * d / n:5.1f}% {p:4} {100 * p / n:5.1f}%")
    n, d, p = (sum(f[i] for f in figures.values()) for i in range(3))
    terminalreporter.write_line(f"{'all':32} {n:4} {d:4} {100 * d / n:5.1f}% {p:4} {100 * p / n:5.1f}%")


def _kill_rates(terminalreporter):
    """The mutation kill rate per kata."""
    figures = _FIGURES["kill"]
    if not figures:
        return
    terminalreporter.section("mutation kill rate")
    killed = sum(k for k, _ in figures.values())
    total = sum(t for _, t in figures.values())
    for kata, (k, t) in sorted(figures.items()):
        terminalreporter.write_line(f"{kata:32} {k:4}/{t:<4} {100 * k / max(t, 1):5.1f}%")
    terminalreporter.write_line(f"{'all':32} {killed:4}/{total:<4} {100 * killed / max(total, 1):5.1f}%")
