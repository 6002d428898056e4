"""The registry is consistent (rustlings' `dev check`): every entry complete, nothing orphaned."""

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from checker import catalogue, engine
from checker.app import report, statement
from checker.catalogue import KATAS, PACKAGE, SOLUTIONS
from checker.lang import speaking
from conftest import checker_modules

pytestmark = pytest.mark.usefixtures("meta_kernels")  # forked checks inherit them (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
KATAS_ALL = catalogue.all_katas()
IDS = [k.id for k in KATAS_ALL]


def _defines(path: Path, targets: tuple[str, ...]) -> bool:
    if not path.is_file():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return set(targets) <= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def missing_places(kata: catalogue.Kata, root: Path = ROOT) -> list[str]:
    """Every place the kata lacks, in the order of the README's "Adding a kata", one line each: its entry,
    its stub, its reference, and in its folder checker/checks/TRACK_NAME/ the hidden parts."""
    named, folder = ", ".join(kata.targets), root / "checker" / "checks" / kata.code
    where = f"checker/checks/{kata.code}"
    ids = {k.id for k in catalogue.all_katas()} if root == ROOT else {kata.id}

    def statement_with_hints(lang):
        path = folder / kata.statement_path(lang).name
        return path.is_file() and len(statement.hints_in(path.read_text(encoding="utf-8"))) == 3

    places = [
        ("its entry in checker/catalogue.toml, with a summary", kata.id in ids and bool(kata.summary)),
        (f"the stub katas/{kata.file}, defining {named}", _defines(root / "katas" / kata.file, kata.targets)),
        (f"the solution solutions/{kata.file}, defining {named}", _defines(root / "solutions" / kata.file, kata.targets)),
        (f"the hidden checks {where}/checks.py", (folder / "checks.py").is_file()),
        (f"the Chinese of its checks and steps {where}/zh.toml", (folder / "zh.toml").is_file()),
        *((f"the statement {where}/{kata.statement_path(lang).name} with 3 hints", statement_with_hints(lang))
          for lang in catalogue.LANGUAGES),
        (f"a wrong variant {where}/variants/wrong_*.py", any((folder / "variants").glob("wrong_*.py"))),
        (f"a right variant {where}/variants/right_*.py", any((folder / "variants").glob("right_*.py"))),
        (f"the reference test {where}/test_reference.py", (folder / "test_reference.py").is_file()),
    ]
    return [place for place, present in places if not present]


def test_ids_are_unique_and_tracks_known():
    assert len(IDS) == len(set(IDS))
    assert {k.track for k in KATAS_ALL} <= set(catalogue.TRACKS)
    assert {k.part for k in KATAS_ALL} <= set(catalogue.PARTS)
    assert all(1 <= k.difficulty <= 5 for k in KATAS_ALL)


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_every_kata_has_every_place(kata):
    missing = missing_places(kata)
    assert not missing, f"{kata.id} is missing:\n" + "\n".join(f"  - {place}" for place in missing)


def test_a_kata_registered_with_nothing_behind_it_is_missing_every_place():
    ghost = catalogue.Kata("ghost", "torch", "Nothing yet", 1, ("Ghost",), (), len(KATAS_ALL))
    expected = ["checker/catalogue.toml", "katas/torch/ghost.py", "solutions/torch/ghost.py",
                "torch_ghost/checks.py", "torch_ghost/zh.toml", "torch_ghost/statement.md",
                "torch_ghost/statement.zh.md", "torch_ghost/variants/wrong_*.py",
                "torch_ghost/variants/right_*.py", "torch_ghost/test_reference.py"]
    missing = missing_places(ghost)
    assert len(missing) == len(expected) and all(path in line for path, line in zip(expected, missing)), missing


def test_the_scaffold_makes_a_kata_that_runs_and_names_only_what_a_person_must_write(tmp_path):
    """python -m checker.app.dev new, in a copy of the repository: the four places exist, the kata is
    registered, through the real CLI its placeholder reference passes and its stub is not_started, and
    what is left to write is the variants alone."""
    import shutil
    import subprocess
    import sys
    import tomllib

    for part in ("katas", "solutions", "checker"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "variants"))
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    for track in ("torch", "numpy"):
        made = subprocess.run([sys.executable, "-m", "checker.app.dev", "new", "ghost", "--track", track, "--root",
                               tmp_path], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        from checker.app import dev

        listed = {path for path, _ in dev.places(track, "ghost")}
        written = {line.strip() for line in made.stdout.splitlines() if line.startswith("  ")}
        assert written and all(path in listed or str(Path(path).parent) + "/" in listed for path in written), \
            (written - listed, "dev new --help does not list it")
        entry = [e for e in tomllib.loads((tmp_path / "checker" / "catalogue.toml").read_text(encoding="utf-8"))["kata"]
                 if e["name"] == "ghost" and e["track"] == track]
        assert len(entry) == 1
        kata = catalogue.Kata("ghost", track, entry[0]["title"], 2, tuple(entry[0]["targets"]), (), 0,
                              summary=entry[0]["summary"])
        assert missing_places(kata, tmp_path) == [f"a wrong variant checker/checks/{kata.code}/variants/wrong_*.py",
                                                  f"a right variant checker/checks/{kata.code}/variants/right_*.py"]
        ws = tmp_path / f"ws_{track}"
        assert subprocess.run([sys.executable, "-m", "checker", "init", ws], capture_output=True, env=env,
                              cwd=tmp_path).returncode == 0
        for flag in ("--solution", "--workspace"):
            args = [flag] if flag == "--solution" else [flag, ws]
            checked = subprocess.run([sys.executable, "-m", "checker", "check", kata.id, "--json", *args],
                                     capture_output=True, text=True, env=env, cwd=tmp_path)
            status = json.loads(checked.stdout)["katas"][0]["status"]
            assert (checked.returncode, status) == ((0, "pass") if flag == "--solution" else (1, "not_started")), \
                checked.stdout
    again = subprocess.run([sys.executable, "-m", "checker.app.dev", "new", "ghost", "--root", tmp_path],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr


def _copy_of_the_repository(tmp_path: Path) -> dict:
    """The package, the stubs and the references copied under tmp_path, and the environment that runs them there
    (a registry to break without touching the real one)."""
    import os
    import shutil

    for part in ("katas", "solutions", "checker"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "variants"))
    return {**os.environ, "PYTHONPATH": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "1000", "KATA_WORKSPACE": "",
            "XDG_DATA_HOME": str(tmp_path / "data")}


def _kata_in(tmp_path: Path, env: dict, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


def test_a_misspelled_registry_key_stops_kata_naming_the_key_and_the_keys_it_may_have_meant(tmp_path):
    """`forbiden = [...]` in catalogue.toml would lift the kata's forbidden list in silence; a misspelled English
    key in a kata's zh.toml would leave its sentence English. Both stop `kata` itself with status 2 (not an internal
    error, 3), in the reader's language."""
    env = _copy_of_the_repository(tmp_path)
    registry = tmp_path / "checker" / "catalogue.toml"
    pristine = registry.read_text(encoding="utf-8")
    registry.write_text(pristine.replace("forbidden = [", "forbiden = [", 1), encoding="utf-8")
    english, chinese = _kata_in(tmp_path, env, "list"), _kata_in(tmp_path, env, "list", "--lang", "zh")
    assert english.returncode == 2 and "unknown key 'forbiden'. Did you mean 'forbidden'?" in english.stderr, \
        english.stderr
    assert "entry 1 (numpy/softmax)" in english.stderr and "Traceback" not in english.stderr
    assert chinese.returncode == 2 and "未知的键“forbiden”。你是不是想写 'forbidden'" in chinese.stderr, chinese.stderr
    registry.write_text(pristine.replace('track = "numpy"', 'track = "numyp"', 1), encoding="utf-8")
    wrong_track = _kata_in(tmp_path, env, "list")
    assert wrong_track.returncode == 2 and "track = 'numyp' does not exist. Did you mean 'numpy'?" in \
        wrong_track.stderr, wrong_track.stderr
    registry.write_text(pristine, encoding="utf-8")
    assert _kata_in(tmp_path, env, "list").returncode == 0

    sentences = tmp_path / "checker" / "checks" / "torch_attention" / "zh.toml"
    key = '"hidden keys get exactly zero weight" ='
    assert key in sentences.read_text(encoding="utf-8")
    sentences.write_text(sentences.read_text(encoding="utf-8").replace(key, '"hiden keys get exactly zero weight" ='),
                         encoding="utf-8")
    steps = _kata_in(tmp_path, env, "solution", "attention", "--yes", "--lang", "zh")
    assert steps.returncode == 2 and "torch_attention/zh.toml" in steps.stderr, steps.stderr
    assert "键“hiden keys get exactly zero weight”" in steps.stderr
    assert "你是不是想写“hidden keys get exactly zero weight”" in steps.stderr
    assert _kata_in(tmp_path, env, "solution", "attention", "--yes").returncode == 0, "English reads no zh.toml"


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_every_key_of_a_katas_chinese_is_a_sentence_of_the_kata(kata):
    from checker import lang

    path = kata.folder / "zh.toml"
    unknown = lang.unknown_keys(path, lang._load(path))
    assert not unknown, "\n".join(f"{key!r}: did you mean {close}?" for key, close in unknown)


def test_the_registry_schema_is_the_kata_record():
    """Every key an entry may have is a field of Kata (order is the entry's place, not a key), and only those."""
    import dataclasses

    fields = {f.name for f in dataclasses.fields(catalogue.Kata)} - {"order"}
    assert set(catalogue.ENTRY_KEYS) == fields
    with pytest.raises(catalogue.RegistryError, match="the key 'targets' is missing"):
        catalogue.validated({"kata": [{"name": "x", "track": "torch", "title": "X", "difficulty": 1}]})
    with pytest.raises(catalogue.RegistryError, match="'difficulty' should be a int"):
        catalogue.validated({"kata": [{"name": "x", "track": "torch", "title": "X", "difficulty": "2",
                                       "targets": []}]})
    with pytest.raises(catalogue.RegistryError, match="unknown table 'katas'"):
        catalogue.validated({"katas": []})


def test_dev_new_help_lists_every_place_the_scaffold_writes():
    import subprocess
    import sys

    from checker.app import dev

    text = subprocess.run([sys.executable, "-m", "checker.app.dev", "new", "--help"], capture_output=True, text=True,
                          env={**__import__("os").environ, "COLUMNS": "1000"}).stdout
    listed = [path for path, _ in dev.places()]
    assert all(path in text for path in listed), text
    places = [path.replace("TRACK_NAME", "torch_ghost").replace("TRACK", "torch").replace("NAME", "ghost")
              for path in listed]
    assert places == [path for path, _ in dev.places("torch", "ghost")]
    named = {p.removeprefix("checker/checks/torch_ghost/") for p in places}
    for line in missing_places(catalogue.Kata("ghost", "torch", "Nothing yet", 1, ("Ghost",), (), 0)):
        assert any(name.rstrip("/") in line for name in named), f"{line}: not in dev new --help"


def test_the_readme_tables_are_drawn_from_the_catalogue():
    from checker.app import dev

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("<!-- catalogue: ") == len(catalogue.PARTS)
    assert dev.readme_with_tables(text, KATAS_ALL) == text, "run `python -m checker.app.dev readme`"


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_stub_raises_not_implemented_and_never_passes(kata):
    source = (KATAS / kata.file).read_text(encoding="utf-8")
    tree = ast.parse(source)
    raises = [n for n in ast.walk(tree) if isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n)]
    assert raises, "a stub's bodies end in raise NotImplementedError"
    body_pass = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and len(n.body) <= 2 and any(isinstance(s, ast.Pass) for s in n.body)]
    assert not body_pass, "a stub never uses `pass` for a body the user must write"
    module = tree.body[0]
    assert isinstance(module, ast.Expr) and "legend" in module.value.value.lower(), "docstring opens with a shape legend"


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_reference_passes_every_hidden_check(kata):
    result = engine.check_file(kata, SOLUTIONS / kata.file)
    failures = [f"{c.name}: {c.message}" for c in result.checks if not c.passed]
    assert result.status == "pass", "\n".join(failures) or result.error
    if importlib.import_module(kata.checks_module).CASES:  # the report's time line: both sides timed
        assert result.user_seconds > 0 and result.reference_seconds > 0
    with speaking("zh"):  # checked in English, drawn in Chinese: every title in Chinese
        titles = [c.name for c in report.drawn(result).checks]
    assert not [title for title in titles if not re.search(r"[\u4e00-\u9fff]", title.split("：", 1)[-1])], titles


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_pristine_stub_is_not_started(kata):
    result = engine.check_file(kata, KATAS / kata.file)
    assert result.status == "not_started", [c.message for c in result.checks]


def test_no_orphan_files():
    known = {(k.track, k.name) for k in KATAS_ALL}

    def pairs(folder: Path, pattern: str):
        return {(p.parent.name, p.stem.split(".")[0]) for p in folder.glob(pattern)}

    assert pairs(ROOT / "katas", "*/*.py") == known
    assert pairs(ROOT / "solutions", "*/*.py") == known
    folders = {tuple(p.name.split("_", 1)) for p in (PACKAGE / "checks").iterdir()
               if p.is_dir() and p.name not in ("child", "shared", "__pycache__")}
    assert folders == known
    expected = {"__init__.py", "checks.py", "zh.toml", "statement.md", "statement.zh.md", "variants",
                "test_reference.py", "driver.py", "__pycache__"}
    for kata in KATAS_ALL:
        extra = {p.name for p in kata.folder.iterdir()} - expected
        assert not extra, f"checker/checks/{kata.code}/ holds what no test reads: {sorted(extra)}"
        odd = [p.name for p in (kata.folder / "variants").iterdir() if p.suffix == ".py"
               and not p.name.startswith(("wrong_", "right_"))]
        assert not odd, f"checker/checks/{kata.code}/variants/: not wrong_*.py or right_*.py: {odd}"
    assert {p.name for p in (PACKAGE / "checks").glob("*.py")} <= {"__init__.py"}


# ----------------------------------------------------------------------------- the house around the checks

CHECK_MODULES = sorted((PACKAGE / "checks").glob("*_*/checks.py"))


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.parent.name)
def test_check_module_sets_only_declared_options(path):
    """A public UPPERCASE name a check module assigns is a kit option; its own constants start with _."""

    from checker.kit import unknown_options

    unknown = unknown_options(importlib.import_module(f"checker.checks.{path.parent.name}.checks"))
    assert not unknown, (f"checker/checks/{path.parent.name}/checks.py sets {', '.join(unknown)}, which no check reads: "
                         "a misspelled option (see kit.Options), or a constant of its own that should start with _")


def test_a_misspelled_option_is_named(tmp_path):
    from types import SimpleNamespace

    from checker.kit import unknown_options

    module = tmp_path / "torch_fake.py"
    module.write_text("TARGET = 'X'\nBATCH_INDEPENDANT = True\n_MY_CASES = []\nF = None  # noqa\n", encoding="utf-8")
    assert unknown_options(SimpleNamespace(__file__=str(module))) == ["BATCH_INDEPENDANT", "F"]


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.stem)
def test_check_module_reaches_the_users_code_only_through_the_kit(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    touched = [f"line {n.lineno}" for n in ast.walk(tree)
               if isinstance(n, ast.Attribute) and n.attr == "sandbox"
               or isinstance(n, ast.ImportFrom) and (n.module or "").startswith("checker.sandbox")]
    assert not touched, f"{path.name} uses the sandbox directly ({', '.join(touched)}): go through kit.user, kit.drive, ..."


def test_a_driver_outside_the_child_package_is_refused():
    from checker.kit import Kit

    kit = Kit(SimpleModule(), sandbox=None, solution=None)
    with pytest.raises(ValueError, match="checker.checks.child"):
        kit.drive(test_a_driver_outside_the_child_package_is_refused)


class SimpleModule:
    TARGET, CASES = "X", ()


def test_the_package_top_level_shows_the_architecture_in_at_most_15_names():
    """checker/ holds at most 15 modules and packages (issue 37): the registry, the language, the verdict as data, the
    engine, the errors and the notebook's entry point, then the app, the workspace's state, the sandbox, the kit, the
    checks, the quiz and the resident checker as packages; and no per-kata support file."""
    top = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and (
        p.suffix == ".py" or p.is_dir() and (p / "__init__.py").exists()))
    assert len(top) <= 15, f"{len(top)} top-level modules and packages: {top}"
    kata_names = {k.name for k in KATAS_ALL}
    per_kata = [name for name in top if any(kata in name for kata in kata_names) or name.startswith(("fixtures", "drivers"))]
    assert not per_kata, f"per-kata support files belong in the kata's folder (driver.py) or checks/child: {per_kata}"


def _imports_of_kata(path: Path, modules: set[str]) -> set[str]:
    """The checker modules a file imports anywhere in it, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != "checker":  # the package itself: its own imports are lazy, its API
                found.add(name)
    return found


def test_no_circle_of_imports_among_the_checkers_modules():
    """Counting imports inside functions too: a lazy import upwards is a circle all the same. errors.py,
    the exit statuses, imports nothing of kata's: every module may raise a UsageError."""
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in checker_modules()}
    graph = {name: _imports_of_kata(path, set(files)) - {name} for name, path in files.items()}
    assert graph["checker.errors"] == set()
    state: dict[str, str] = {}

    def circle_from(name, path):  # depth first; a module met again while on the path closes a circle
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            if other not in state:
                found = circle_from(other, path + [other])
                if found:
                    return found
        state[name] = "done"
        return None

    for name in sorted(graph):
        if name not in state:
            circle = circle_from(name, [name])
            assert circle is None, "a circle of imports: " + " -> ".join(circle)


# The layers of the package, bottom first: a module imports only from its own layer or the ones below it.
LAYERS = (
    ("checker", "checker.errors"),  # the version; the exit statuses and the errors both sides of the sandbox raise
    ("checker.lang",),  # every sentence, in both languages
    ("checker.results", "checker.catalogue", "checker.state", "checker.quiz"),  # the verdict as data, the registry,
    # what the workspace keeps, the quiz's questions
    ("checker.sandbox",),  # the child that runs the user's code, and the parent's side of it
    ("checker.kit", "checker.checks.child", "checker.checks.shared"),  # what checks are written with, drivers shared
    ("checker.checks",),  # the katas' checks and their own drivers
    ("checker.engine",),  # one file checked
    ("checker.warm",),  # the resident checker
    ("checker.app", "checker.notebook", "checker.quiz.ask", "checker.__main__"),  # the command, its views, the notebook
)


def _layer(module: str) -> int:
    best = max((len(prefix), i) for i, names in enumerate(LAYERS) for prefix in names
               if module == prefix or module.startswith(prefix + "."))
    return best[1]


def test_no_import_arrow_runs_back_up_lazy_ones_included():
    """The package's own __init__ aside: `%load_ext checker` and checker.check() reach the notebook through it, lazily,
    and every module reads its __version__."""
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in checker_modules()}
    upward = [f"{name} ({_layer(name)}) imports {other} ({_layer(other)})"
              for name, path in sorted(files.items()) if name != "checker"
              for other in sorted(_imports_of_kata(path, set(files))) if _layer(other) > _layer(name)]
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_float32_internals_open_no_door_to_a_named_mistake(kata):
    """Every kata accepts float32 internals on float64 input within FLOAT32_INSIDE (one policy). So no named
    mistake may lie that close to the reference on every case while a float64 comparison would catch it."""
    from checker.kit import FLOAT32_INSIDE, Kit, as_outputs, matches, options

    spec = importlib.import_module(kata.checks_module)
    opts = options(spec)
    if opts.OUTPUTS is None:
        return  # no standard numerics, no convention tried
    kit = Kit(spec, None, engine.load_solution(kata))
    for mistake in opts.MISTAKES:
        inside, caught = True, False
        for c in opts.CASES:
            try:
                want = as_outputs(kit.reference(kit.inputs(c), case=c), opts.OUTPUTS)
                wrong = as_outputs(kit.reference(kit.inputs(c), case=c, impl=mistake.impl), opts.OUTPUTS)
            except Exception:  # noqa: BLE001 - a mistake that cannot run on a case is outside on it
                inside = False
                break
            inside = inside and all(matches(w, e, FLOAT32_INSIDE) for w, e in zip(wrong, want))
            caught = caught or not all(matches(w, e, kit.tolerance("float64")) for w, e in zip(wrong, want))
        assert not (inside and caught), f"{mistake.name} lies within float32 internals' tolerance on every case"


def test_every_module_kata_calls_one_module_on_inputs_of_other_sizes_and_every_kata_watches_the_callers_world():
    """The properties every kata shares, from its contract alone (issue 36): a torch module kata calls one module on two
    inputs of other sizes in both orders (no_state_between_calls); a function kata handed a model or an optimizer calls
    it twice on the same one; the engine adds the caller's-world check to every kata."""
    from checker.kit import options, same_object_check, standard_checks

    missing = []
    for kata in catalogue.all_katas():
        spec = importlib.import_module(kata.checks_module)
        opts = options(spec)
        if opts.OUTPUTS is None or not kata.track == "torch":
            continue
        names = {fn.__name__ for fn in standard_checks(spec)}
        if getattr(spec, "init", None) is not None and "no_state_between_calls" not in names:
            missing.append(kata.id)
    assert not missing, f"module katas without the many-calls property: {missing}"
    assert same_object_check(importlib.import_module(catalogue.find("greedy_decode").checks_module)) is not None
    source = (PACKAGE / "engine.py").read_text(encoding="utf-8")
    assert "checks.append(kitmod.world_check(source))" in source  # unconditional: every kata
