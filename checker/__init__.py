"""kata: hand-write the Transformer and get a strict, truthful verdict.

    from checker import check
    check("attention", ScaledDotProductAttention)     # or check("attention", source=code)

In IPython or Jupyter, `%load_ext checker` adds %%kata NAME (check the cell) and %kata hint|show NAME.
Importing this package costs no torch: the checks run in a separate process.
"""

__version__ = "0.2.0"


def check(name: str, obj=None, **options):
    """Run kata NAME's hidden checks on obj (a class or function of yours) or on source=...; see checker.notebook."""
    from checker.notebook import check as run

    return run(name, obj, **options)


def load_ipython_extension(ipython) -> None:
    from checker.notebook import load_ipython_extension as load

    load(ipython)
