"""Off-limits shortcuts, enforced twice: by reading the source, and by trapping calls at run time.

A kata's `forbidden` list (catalogue.toml) holds dotted names: a function or class
(`torch.nn.functional.scaled_dot_product_attention`, `torch.nn.LayerNorm`) or a whole module
(`torch` in the NumPy track).
"""

from __future__ import annotations

import ast
import importlib
import sys


def scan(source: str, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, dotted name) for every import or use of a forbidden name in the source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the loader reports syntax errors with file, line and caret
    aliases = _aliases(tree)
    found: list[tuple[int, str]] = []

    def hit(line: int, dotted: str) -> None:
        for name in forbidden:
            if dotted == name or dotted.startswith(name + "."):
                if (line, name) not in found:
                    found.append((line, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                hit(node.lineno, a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                hit(node.lineno, f"{node.module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) or isinstance(node, ast.Name):
            dotted = _dotted(node, aliases)
            if dotted:
                hit(node.lineno, dotted)
    return sorted(found)


def _aliases(tree) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the imports (import torch.nn.functional as F)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return aliases


def _dotted(node, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


# ----------------------------------------------------------------------------- tensors made from nothing

# The torch functions and methods that can make a tensor from nothing: each takes a device argument,
# reads data from outside torch, or moves a tensor to a fixed device (tests/checks/test_rules.py holds this
# list to the installed torch). A call of a name ending in Tensor or Storage (torch.FloatTensor) too.
MAKERS = frozenset({
    "arange", "as_tensor", "asarray", "bartlett", "bartlett_window", "blackman", "blackman_window", "cosine", "cpu",
    "cuda", "device", "distributions", "empty", "empty_permuted", "empty_strided", "Event", "exponential", "eye",
    "fftfreq", "from_dlpack", "from_file", "from_numpy", "frombuffer", "full", "gaussian", "general_cosine",
    "general_hamming", "generate_square_subsequent_mask", "Generator", "GradScaler", "hamming", "hamming_window",
    "hann", "hann_window", "ipu", "kaiser", "kaiser_window", "linspace", "load", "logspace", "mps", "mtia", "normal",
    "nuttall", "ones", "rand", "randint", "randn", "randperm", "range", "rfftfreq", "scalar_tensor",
    "set_default_device", "set_default_tensor_type", "sparse_bsc_tensor", "sparse_bsr_tensor",
    "sparse_compressed_tensor", "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor", "Stream", "tensor",
    "to_empty", "tril_indices", "triu_indices", "xpu", "zeros",
})
# Modules whose use cannot bring in a tensor from elsewhere (numpy can: torch.from_numpy, or mixed in).
PURE_MODULES = frozenset({"__future__", "abc", "collections", "dataclasses", "einops", "enum", "functools",
                          "itertools", "math", "numbers", "operator", "typing", "typing_extensions", "torch",
                          "warnings"})
BY_NAME = frozenset({"__import__", "compile", "eval", "exec", "getattr", "globals", "importlib", "vars"})
DEVICES = frozenset({"cpu", "cuda", "meta", "mps", "xpu"})


def makes_tensors(source: str) -> bool:
    """Whether the code may hold a tensor that does not come from its inputs (a mask from torch.ones, a
    constant from torch.tensor, a global, something moved to the CPU): False only when the source shows
    none can exist. Then the device check, which runs the code on the meta device (about 1 s of torch
    imports in a fresh process), cannot fail, and is not run.

    False needs all of: no torch function from MAKERS (torch.ones, x.cpu(), torch.device ...), no
    device named in a string, no module outside PURE_MODULES and no relative import, nothing looked up
    by name (getattr, eval ...), and no torch.nn module built outside an __init__ (its weights would stay
    where they were made)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] not in PURE_MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] not in PURE_MODULES
                                                 or any(a.name in MAKERS for a in node.names)):
            return True
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in BY_NAME:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] in DEVICES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in MAKERS and (
                node.attr != "device" or (_dotted(node, aliases) or "").startswith("torch.")):
            return True  # x.device reads where the input lives; torch.device(...) names a place
        if isinstance(node, ast.Call) and (_dotted(node.func, aliases) or "").endswith(("Tensor", "Storage")):
            return True  # torch.Tensor(3, 4), torch.FloatTensor([...]): the legacy constructors
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_module_class(node.func, aliases) and \
                not _registered(node, parents, aliases):
            return True
    return False


def _is_module_class(func, aliases: dict[str, str]) -> bool:
    """torch.nn.Linear, nn.LayerNorm, Linear imported from torch.nn: a module class (not nn.Parameter)."""
    dotted = _dotted(func, aliases) or ""
    name = dotted.rsplit(".", 1)[-1]
    return dotted.startswith("torch.nn.") and name[:1].isupper() and name != "Parameter"


_CONTAINERS = ("ModuleList", "ModuleDict", "Sequential", "add_module", "register_module")


def _registered(call, parents: dict, aliases: dict[str, str]) -> bool:
    """A module built in __init__ and registered on self (self.proj = nn.Linear(...), or inside an
    nn.ModuleList / nn.Sequential / add_module): module.to(device) moves its weights. One kept in a
    plain list, a global or a class attribute stays where it was made."""
    node, inside_init, plain = call, False, False
    while id(node) in parents:
        node = parents[id(node)]
        plain = plain or isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
                                           ast.DictComp, ast.GeneratorExp))
        if isinstance(node, ast.Call) and (_dotted(node.func, aliases) or getattr(node.func, "attr", "")).endswith(
                _CONTAINERS):
            registered = True
            break
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            registered = not plain and all(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                           and t.value.id == "self" for t in targets)
            break
        if isinstance(node, ast.stmt):
            registered = False
            break
    else:
        return False
    while id(node) in parents and not inside_init:
        node = parents[id(node)]
        inside_init = isinstance(node, ast.FunctionDef) and node.name == "__init__"
    return registered and inside_init


# ----------------------------------------------------------------------------- run time (in the child)

_INSTALLED: list[tuple[object, str, object]] = []  # (owner, attribute, original): what remove_traps puts back


def install_traps(forbidden: tuple[str, ...], user_path: str) -> None:
    """Wrap each forbidden function or class that can be imported, so calls are recorded.

    The call still runs (the user sees their result); the kata fails with the name and line. A function
    is wrapped under every name a loaded module of its package gives it (F.scaled_dot_product_attention
    is also torch._C._nn.scaled_dot_product_attention), and the wrapper keeps no __wrapped__. Each call
    is told to the sandbox's audit hook (checker.sandbox.boundary), which keeps the record out of the user's reach.
    Installed before the user's file is imported, so `from x import f` picks up the wrapper.
    """
    for name in forbidden:
        module_name, _, attr = name.rpartition(".")
        if not module_name or module_name not in sys.modules and not _importable(module_name):
            continue
        try:
            owner = importlib.import_module(module_name)
            original = getattr(owner, attr)
        except (ImportError, AttributeError):
            continue  # a whole module (e.g. `torch` in the NumPy track) is caught by the source scan
        if isinstance(original, type):
            _INSTALLED.append((original, "__init__", original.__dict__.get("__init__")))
            _trap_class(original, name, user_path)
        elif callable(original):
            wrapper = _wrap(original, name, user_path)
            for module in _namespaces(module_name):
                for alias, value in items(vars(module)):
                    if value is original:
                        _INSTALLED.append((module, alias, original))
                        setattr(module, alias, wrapper)


def _namespaces(module_name: str) -> list:
    """Where a function of module_name may live under other names: its module, its package's top, and the
    package's compiled namespaces (torch._C._nn holds F.scaled_dot_product_attention, torch._C._VariableFunctions
    torch.softmax). A few modules, not every loaded one: this runs before each file is imported."""
    package = module_name.partition(".")[0]
    return [m for n, m in items(sys.modules)
            if m is not None and (n in (module_name, package) or n.startswith(f"{package}._C"))]


def items(namespace: dict) -> list:
    """A snapshot of a dict that another thread may be adding to (the sandbox child imports torch's meta kernels
    in a thread while the traps go in): list() over it raises when the dict grows mid-copy, so copy again."""
    while True:
        try:
            return list(namespace.items())
        except RuntimeError:  # dictionary changed size during iteration
            continue


def remove_traps() -> None:
    """Put every trapped function and class back as it was (a child that serves another file next)."""
    while _INSTALLED:
        owner, attr, original = _INSTALLED.pop()
        if original is None:  # a class that inherited its __init__
            delattr(owner, attr)
        else:
            setattr(owner, attr, original)


def _importable(module_name: str) -> bool:
    try:
        importlib.import_module(module_name)
        return True
    except ImportError:
        return False


def _record(name: str, user_path: str) -> None:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == user_path:
            sys.audit("kata.trapped", frame.f_lineno, name)
            return
        frame = frame.f_back


def _wrap(fn, name: str, user_path: str):
    def trapped(*args, **kwargs):
        _record(name, user_path)
        return fn(*args, **kwargs)

    _look_like(trapped, fn)
    return trapped


def _look_like(wrapper, fn) -> None:
    """The wrapped function's name and docstring (help() and tracebacks read the same), not functools.wraps:
    its __wrapped__ would hand the user's code the function itself."""
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass


def _trap_class(cls: type, name: str, user_path: str) -> None:
    original_init = cls.__init__

    def trapped_init(self, *args, **kwargs):
        _record(name, user_path)
        original_init(self, *args, **kwargs)

    _look_like(trapped_init, original_init)
    cls.__init__ = trapped_init
