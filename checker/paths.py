"""Where the pristine stubs and the references live: inside the wheel, or beside the package in a clone."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    inside = PACKAGE / f"_{name}"  # a wheel built by `pip install .`
    return inside if inside.is_dir() else PACKAGE.parent / name  # a clone or an editable install


KATAS = _bundled("katas")
SOLUTIONS = _bundled("solutions")
