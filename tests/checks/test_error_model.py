"""The error model (checker/kit/errormodel.py): rewrites of a reference's code, the search for the one that
reproduces a user's outputs, and what is said. The end-to-end cases are the project's variants named
wrong_em_*.py (tests/checks/test_variants.py runs them): each is a class of mistake in a shape no kata names
by hand, and its `# expect:` line is the error model's concept."""

import ast
import types

import pytest
import torch

from checker.kit import errormodel
from checker.kit.authoring import case
from checker.lang import speaking

REFERENCE = '''
import math
import torch


def norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        T = scores.size(-1)
        keep = torch.ones(T, T, dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return scores.softmax(dim=-1) @ v
'''


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("em") / "reference.py"
    path.write_text(REFERENCE, encoding="utf-8")
    module = types.ModuleType("em_reference")
    module.__file__ = str(path)
    exec(compile(REFERENCE, str(path), "exec"), module.__dict__)
    return module


def _described(source: str) -> list:
    rewrites = errormodel.Rewrites(source, "<test>")
    return [rewrites.describe(k) for k in range(len(rewrites))]


def test_each_rule_rewrites_the_fragment_it_is_about():
    said = [(r.rule, r.before, r.after) for r in _described(REFERENCE)]

    def has(rule, before, after):  # a short fragment is shown inside the statement that holds it
        return any(r == rule and before in b and after in a for r, b, a in said)

    assert has("axis", "x.mean(dim=-1, keepdim=True)", "x.mean(dim=-2, keepdim=True)")
    assert has("keepdim", "mean = x.mean(dim=-1, keepdim=True)", "mean = x.mean(dim=-1)")
    assert has("transpose", "k.transpose(-2, -1)", "k.transpose(1, 2)")
    assert has("power", "(x - mean).pow(2)", "(x - mean).pow(3)")
    assert has("power", "torch.sqrt(var + eps)", "return (x - mean) / (var + eps)")
    assert has("term", "torch.sqrt(var + eps)", "torch.sqrt(var)")
    assert has("mask", "torch.ones(T, T, dtype=torch.bool).tril()", "torch.ones(T, T, dtype=torch.bool).triu()")
    assert has("mask", "scores.masked_fill(~keep, float('-inf'))", "scores.masked_fill(keep, float('-inf'))")
    assert has("branch", "if causal:", "if False:")
    assert ("written_in", "return (x - mean) / torch.sqrt(var + eps)", "return (x - mean) / torch.sqrt(var + 1e-12)") \
        in said
    assert ("constant", "scores = scores.masked_fill(~keep, float('-inf'))",
            "scores = scores.masked_fill(~keep, -1e9)") in said
    assert has("operands", "x - mean", "mean - x")
    assert ("variable", "return scores.softmax(dim=-1) @ v", "return scores.softmax(dim=-1) @ q") in said
    assert has("function", "x.mean(dim=-1, keepdim=True)", "x.sum(dim=-1, keepdim=True)")
    assert has("function", "scores.softmax(dim=-1)", "scores.log_softmax(dim=-1)")


def test_a_step_moved_to_another_part_of_its_expression_is_a_rewrite():
    source = "import torch.nn.functional as F\n\ndef swiglu(a, b):\n    return F.silu(a) * b\n"
    said = {(r.rule, r.after) for r in _described(source)}
    assert ("scope", "return F.silu(a * b)") in said and ("scope", "return a * F.silu(b)") in said


def test_a_rewrite_is_taken_out_of_the_tree_again():
    rewrites = errormodel.Rewrites(REFERENCE, "<test>")
    before = ast.unparse(rewrites.tree)
    for k in range(0, len(rewrites), 7):
        rewrites.module(k, "m")
    rewrites.module((0, 5), "m")
    assert ast.unparse(rewrites.tree) == before


def test_every_rewrite_of_every_reference_compiles_or_is_dropped_and_none_leaves_a_change():
    """The rules work on the whole catalogue's references: each rewrite builds a module or says None, and the tree
    is as it was after all of them."""
    from checker.catalogue import SOLUTIONS

    for path in sorted(SOLUTIONS.glob("*/*.py"))[::9]:  # a spread of references: the slow tier does them all
        source = path.read_text(encoding="utf-8")
        rewrites = errormodel.Rewrites(source, str(path))
        before = ast.unparse(rewrites.tree)
        for k in range(0, len(rewrites), max(1, len(rewrites) // 40)):
            rewrites.module(k, "m")
        assert ast.unparse(rewrites.tree) == before, path


def test_a_rewrite_that_python_warns_about_warns_no_one():
    """`max_scale is 0`, a constant rewritten beside `is`, makes compile() warn (SyntaxWarning): that warning would
    reach the user's terminal, naming the reference's file."""
    import warnings
    from checker.catalogue import SOLUTIONS

    path = SOLUTIONS / "torch" / "clip_loss.py"
    rewrites = errormodel.Rewrites(path.read_text(encoding="utf-8"), str(path))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")  # ("error" would turn it into the SyntaxError that drops a rewrite)
        for k in range(len(rewrites)):
            rewrites.module(k, "m")
    assert not said, [str(w.message) for w in said]


def test_the_distance_of_infinite_outputs_warns_no_one():
    """inf - inf is NaN, which the distance counts as far: NumPy's RuntimeWarning would reach the user's terminal."""
    import warnings

    inf = torch.tensor([float("inf"), 1.0], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert errormodel._distance((inf,), (inf,)) > 0


def _search(reference, user, cases, target="norm", budget=5.0, found=None):
    got = {c.id: user(*c.extra["args"]) for c in cases}

    def run(module, c):
        return getattr(module, target)(*c.extra["args"])

    def same(a, b):
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)

    return errormodel.search(reference, run, cases, got, same, budget, found=found)


def _cases(*shapes, eps=None):
    g = torch.Generator().manual_seed(3)
    made = []
    for i, shape in enumerate(shapes):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 2 + 0.5
        made.append(case(i + 1, args=(x,) if eps is None else (x, eps[i])))
    return made


def test_the_one_rewrite_that_reproduces_the_outputs_is_found_and_said(reference):
    def user(x, eps=1e-5):
        m = x.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(-1, keepdim=True) + 1e-12)

    cases = _cases((2, 5, 6), (4, 3), eps=[1e-5, 1e-2])
    cases[0].extra["args"][0][1, 2] = 2.5  # a constant row: 1e-12 there gives 0, no eps at all gives 0 / 0
    fits = _search(reference, user, cases)
    assert [[(r.rule, r.anchor[0]) for r in change] for change in fits] == [[("written_in", ("value", 1e-12))]]
    said = str(errormodel.explain(fits))
    assert said.startswith("your outputs equal the reference's with one change, an argument replaced by a value")
    with speaking("zh"):
        chinese = str(errormodel.explain(fits))
    assert "你的输出等于参考实现改动一处后的结果" in chinese and "写死" in chinese


def test_a_change_an_earlier_search_of_the_file_found_is_tried_first_and_said_where_it_fits(reference):
    """A file's failing checks mostly show one mistake: the second search starts from the first's fit, and says it
    without a search of its own (here no budget at all) where it gives this check's outputs too; where it does not,
    the search runs as before."""
    def user(x, eps=1e-5):
        m = x.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(-1, keepdim=True) + 1e-12)

    cases = _cases((2, 5, 6), (4, 3), eps=[1e-5, 1e-2])
    cases[0].extra["args"][0][1, 2] = 2.5
    found = []
    first = _search(reference, user, cases, found=found)
    assert len(found) == 1 and first
    again = _search(reference, user, _cases((3, 4), (2, 2, 5), eps=[1e-3, 1e-5]), budget=0.0, found=found)
    assert [[r.rule for r in change] for change in again] == [["written_in"]]

    def other(x, eps=1e-5):  # an eps of 1e-12 no more: the first search's fit does not give these outputs
        return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps) * 2
    assert _search(reference, other, cases, budget=0.0, found=found) == []


def test_a_rewrite_that_is_right_where_the_user_is_wrong_is_not_said(reference):
    """An axis slip that only shows on inputs of rank 3: the rewrite must reproduce every case, the ones the user's
    code gets right included."""
    def user(x, eps=1e-5):  # over the batch axis on (B, T, D), over the last on (T, D)
        dim = 0 if x.dim() == 3 else -1
        mean = x.mean(dim=dim, keepdim=True)
        var = (x - mean).pow(2).mean(dim=dim, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps)

    fits = _search(reference, user, _cases((2, 5, 6), (4, 3)))
    assert fits == []  # dim=0 at both reductions gives the user's (B, T, D) outputs, and is wrong on (T, D)


def test_the_same_slip_at_every_reduction_of_a_function_is_one_change(reference):
    """Both statistics over axis 1 (right on (T, D), wrong on (B, T, D)): one change, shown at both statements."""
    def user(x, eps=1e-5):
        mean = x.mean(dim=1, keepdim=True)
        var = (x - mean).pow(2).mean(dim=1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps)

    fits = _search(reference, user, _cases((2, 5, 6), (4, 3)))
    assert [(r.rule, r.after) for r in fits[0]] == [
        ("axis", "mean = x.mean(dim=1, keepdim=True); var = (x - mean).pow(2).mean(dim=1, keepdim=True)")]


def _outcome(user, *args):
    try:
        return user(*args)
    except Exception as exc:  # noqa: BLE001 - the user's error is what the search must reproduce
        return errormodel.Raised(type(exc).__name__, str(exc))


def test_an_error_is_an_output_a_rewrite_fits_when_it_raises_the_same_word_for_word(reference):
    """keepdim dropped: a statistic (B, T) meets x (B, T, D), and torch says so with the sizes. The rewrites of the
    reference that raise the same text on every case are the changes; a text worded otherwise fits none."""
    def user(x, eps=1e-5):
        mean = x.mean(dim=-1)
        var = (x - mean[..., None]).pow(2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps)

    cases = _cases((2, 5, 6), (3, 4, 7))

    def run(module, c):
        return module.norm(*c.extra["args"])

    def same(a, b):
        return a.shape == b.shape and torch.allclose(a, b)

    got = {c.id: _outcome(user, *c.extra["args"]) for c in cases}
    assert all(isinstance(v, errormodel.Raised) and "(6)" in got[1][1] for v in got.values())
    fits = errormodel.search(reference, run, cases, got, same, 5.0)
    # either statistic without its axis raises this text first: two changes fit, and both are said
    assert [[(r.rule, r.after) for r in change] for change in fits] == [
        [("keepdim", "mean = x.mean(dim=-1)")], [("keepdim", "(x - mean).pow(2).mean(dim=-1)")]]
    assert str(errormodel.explain(fits, raised=True)).startswith("the reference raises your error too with one change")
    with speaking("zh"):
        assert "参考实现改动一处后也会抛出你的这个错误" in str(errormodel.explain(fits, raised=True))
    reworded = {k: errormodel.Raised(v[0], v[1].replace("must match", "has to match")) for k, v in got.items()}
    assert errormodel.search(reference, run, cases, reworded, same, 5.0) == []
    assert errormodel._evidence(got[1]) == 3  # the sizes and the axis in its text: enough to search on


def test_nothing_is_said_when_no_rewrite_fits(reference):
    def user(x, eps=1e-5):
        return torch.tanh(x)

    assert _search(reference, user, _cases((2, 5, 6), (4, 3))) == []


def test_too_many_different_fits_say_nothing():
    change = lambda rule, before, after: [errormodel.Rewrite(rule, 1, before, after, (), after)]  # noqa: E731
    fits = [change("axis", "a", "b"), change("term", "c", "d"), change("power", "e", "f")]
    assert errormodel._distinct(fits) == []
    assert len(errormodel._distinct(fits[:2])) == 2
    same = [change("axis", "x.sum(dim=-1)", "x.sum(dim=1)"), change("off_by_one", "-1", "x.sum(dim=1)")]
    assert len(errormodel._distinct(same)) == 1  # two rules that write the same statement are one change


def test_the_line_is_the_one_line_of_the_users_code_that_holds_the_change():
    fit = [[errormodel.Rewrite("written_in", 3, "", "", (("value", 1e-12), ("call", "sqrt")))]]
    source = "import torch\n\ndef f(x):\n    v = x.var(-1)\n    return x / torch.sqrt(v + 1e-12)\n"
    assert errormodel.locate(source, fit) == 5
    twice = source + "\ndef g(x):\n    return torch.sqrt(x + 1e-12)\n"
    assert errormodel.locate(twice, fit) is None  # two lines hold 1e-12 and two call sqrt: no line is said


def test_a_rewrite_that_never_ends_is_stopped():
    source = "def f(n: int) -> int:\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
    with errormodel._deadline(0.2), pytest.raises(TimeoutError):
        while True:
            pass
    assert errormodel.Rewrites(source, "<t>").module(0, "m") is not None


def test_a_rewrite_whose_value_the_comparison_cannot_read_is_no_fit_and_no_internal_error():
    """A rewrite of layer_norm_backward's reference gave a float where the user's result is an array: the check's own
    comparison raised AttributeError, and the whole check became an internal error. It is simply no fit."""
    from checker.kit import matches

    user = (torch.ones(3), torch.zeros(2))
    c = case(1)
    assert errormodel._fits((1.5, torch.zeros(2)), c, {1: user}, lambda a, b: all(map(matches, a, b))) == (False, None)
    assert errormodel._fits((torch.ones(3), torch.zeros(2)), c, {1: user},
                            lambda a, b: all(map(matches, a, b))) == (True, 0.0)



GROW = '''
import torch


def grow(table: torch.Tensor, used: int, new: int, page: int, free: torch.Tensor) -> torch.Tensor:
    extra = (used + new + page - 1) // page - table.shape[0]
    return torch.cat([table, free[:extra]])
'''


def test_two_slips_in_one_formula_are_found_although_neither_alone_comes_near(tmp_path):
    """A count with two of its terms left out (pages for the new tokens alone, as if the last page were always full):
    each slip alone gives a table of another length, so no distance ranks it near the user's, and the pair is found
    among the rewrites of that one statement, said as the statement before and after. Two slips of different kinds
    in one formula (a term and an operator) are said as such."""
    path = tmp_path / "grow.py"
    path.write_text(GROW, encoding="utf-8")
    module = types.ModuleType("em_grow")
    module.__file__ = str(path)
    exec(compile(GROW, str(path), "exec"), module.__dict__)

    def user(table, used, new, page, free):
        return torch.cat([table, free[:-(-new // page)]])

    free = torch.arange(10, 20)
    cases = [case(i + 1, args=(torch.arange(-(-used // page)), used, new, page, free))
             for i, (used, new, page) in enumerate([(5, 2, 4), (8, 1, 4), (3, 6, 4), (6, 7, 3), (1, 1, 4)])]
    fits = _search(module, user, cases, target="grow")
    assert [[(r.rule, r.before, r.after) for r in change] for change in fits] == [[(
        "term", "extra = (used + new + page - 1) // page - table.shape[0]", "extra = (new + page - 1) // page")]]
    assert errormodel.explain(fits) == (
        "your outputs equal the reference's with two changes, a term dropped from a sum, or a factor from a product: "
        "where the reference has `extra = (used + new + page - 1) // page - table.shape[0]`, yours behaves as "
        "`extra = (new + page - 1) // page`")
