"""Classes of failure every kata shares get a diagnosis from the kit and engine: a crash on a shape
mismatch names the sizes in the error after the case's dimensions, at the user's line; an input
modified in place names the in-place write. A named mistake still wins over such a diagnosis."""

import sys
import pytest
from conftest import ROOT

from checker import catalogue, engine
from checker.app import report
from checker.lang import said, speaking

pytestmark = pytest.mark.usefixtures("meta_kernels")  # forked checks inherit them (tests/conftest.py)

TORCH = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
NUMPY = (ROOT / "solutions" / "numpy" / "attention.py").read_text(encoding="utf-8")


def _check(tmp_path, kata, source, old, new, *, drawn=True):
    """The result of source with old replaced by new, drawn in English (as --json has it) unless drawn is False,
    and the line of the change."""
    assert old in source
    path = tmp_path / "mine.py"
    path.write_text(source.replace(old, new), encoding="utf-8")
    line = source[: source.index(old)].count("\n") + 1
    result = engine.check_file(catalogue.find(kata), path, timed=False)
    return (report.drawn(result) if drawn else result), line


def test_torch_crash_names_the_sizes_after_the_case_dimensions(tmp_path):
    # case 1: d_k = 4, T_k = 7; Q @ K multiplies (T_q, d_k) by (T_k, d_k)
    result, line = _check(tmp_path, "attention", TORCH, "Q @ K.transpose(-2, -1)", "Q @ K")
    assert result.status == "fail"
    assert result.diagnosis.startswith(f"line {line} multiplies a matrix of 4 (d_k) columns by one of 7 (T_k) rows")


def test_numpy_crash_names_the_sizes_after_the_case_dimensions(tmp_path):
    result, line = _check(tmp_path, "numpy/attention", NUMPY, "q @ np.swapaxes(k, -1, -2)", "q @ k")
    assert result.status == "fail"
    assert f"line {line}" in result.diagnosis and "(d_k)" in result.diagnosis and "(T_k)" in result.diagnosis


def test_a_size_is_named_as_a_product_of_two_dimensions_only_when_no_sum_of_two_gives_it_too():
    """A cache's length is the past plus the new tokens: 6 where T_past = 5 and T_new = 1, which B × H = 3 × 2 gives
    as well; the legend then names neither (a kv-cache mask built from the heads axis was told "6 (B × H)")."""
    from checker.kit.crashes import _size_names

    assert _size_names(6, {"B": 3, "H": 2, "T_past": 5, "T_new": 1}) == "6"
    assert _size_names(6, {"B": 3, "H": 2, "T": 7}) == "6 (B × H)"
    assert _size_names(5, {"B": 3, "H": 2, "T_past": 5, "T_new": 1}) == "5 (T_past)"


def test_a_raise_of_another_error_is_told_what_its_caller_cannot_catch_not_what_a_silent_pass_does():
    """The contract promises ValueError; code that stops with another error did not pass silently, so the sentence for a
    silent pass (a typo picks an activation) would state what did not happen."""
    from checker.errors import UserError
    from checker.kit import Fail
    from checker.kit.standard import expect_raises

    def lookup():
        raise UserError("KeyError", "'swish'", "")

    with pytest.raises(Fail) as failed:
        expect_raises([("f(activation='swish')", lookup)], "a typo would silently pick an activation")
    assert "raised KeyError" in str(failed.value.message)
    assert "does not catch your KeyError" in str(failed.value.diagnosis)
    assert "silently" not in str(failed.value.diagnosis)
    with pytest.raises(Fail) as failed:
        expect_raises([("f(activation='swish')", lambda: None)], "a typo would silently pick an activation")
    assert "silently pick" in str(failed.value.diagnosis)


def test_broadcast_crash_speaks_chinese(tmp_path):
    # checked once (in English), drawn in Chinese: the language is chosen where the result is drawn
    result, line = _check(tmp_path, "attention", TORCH, "out = weights @ V", "out = weights @ V.transpose(-2, -1)",
                          drawn=False)
    assert result.status == "fail"
    with speaking("zh"):
        diagnosis = report.drawn(result).diagnosis
    assert diagnosis.startswith(f"第 {line} 行") and "(T_k)" in diagnosis


def test_a_crash_the_reference_raises_too_with_one_change_is_named_by_that_change(tmp_path):
    """The error model reads an error as an output: `weights * V` raises what the reference raises with its `@`
    written as `*`, word for word, on every case, and no other single change does. The change is said, not the sizes."""
    result, line = _check(tmp_path, "attention", TORCH, "out = weights @ V", "out = weights * V", drawn=False)
    assert result.status == "fail"
    assert str(result.diagnosis).startswith("the reference raises your error too with one change, one arithmetic")
    assert "`out = weights * V`" in str(result.diagnosis)
    with speaking("zh"):
        assert report.drawn(result).diagnosis.startswith("参考实现改动一处后也会抛出你的这个错误")


def test_a_reduction_that_lost_its_axis_is_named_where_it_cannot_broadcast_on_either_track(tmp_path):
    """A row statistic without keepdims meets the rows it came from: NumPy names both shapes, and the one that is the
    other without its last axis is named as the sum, mean or max that dropped it (keepdim), not as a transpose."""
    result, line = _check(tmp_path, "numpy/attention", NUMPY, "keepdims=True", "keepdims=False")
    assert result.status == "fail"
    assert result.diagnosis.startswith(f"line {line} combines shapes") and "without its last axis" in result.diagnosis
    from checker.kit.crashes import _lost_axis

    assert _lost_axis([(2, 4, 6, 6), (2, 4, 6)]) == ((2, 4, 6, 6), (2, 4, 6))
    assert _lost_axis([(3,), (3, 5)]) == ((3, 5), (3,))
    assert _lost_axis([(3, 5), (5, 3)]) is None and _lost_axis([(3, 5), (4,)]) is None


def test_an_index_past_the_end_of_an_axis_is_said_with_the_range_it_has(tmp_path):
    result, line = _check(tmp_path, "attention", TORCH, "Q @ K.transpose(-2, -1)", "Q[:, :, [0, 99]] @ K.transpose(-2, -1)")
    assert result.status == "fail"
    assert result.diagnosis.startswith(f"line {line} reads index 99 of an axis of size ")
    assert "the indices there run from 0 to" in result.diagnosis


def test_input_modified_in_place_is_diagnosed(tmp_path):
    result, _ = _check(tmp_path, "numpy/attention", NUMPY, "scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)",
                       "q /= math.sqrt(d_k)\n    scores = q @ np.swapaxes(k, -1, -2)")
    assert "in-place" in result.diagnosis


def test_a_named_mistake_wins_over_a_crash(tmp_path):
    # No scaling (a named mistake, diagnosed by numerics) and a crash on 2-D inputs (k.transpose(0, 2, 1)).
    result, _ = _check(tmp_path, "numpy/attention", NUMPY, "q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)",
                       "q @ (k.transpose(0, 2, 1) if k.ndim == 3 else np.swapaxes(k, -1, -2)) if k.ndim != 2 "
                       "else q @ k.transpose(1, 0, 2)")
    assert result.status == "fail"
    crashed = [c for c in result.checks if not c.passed and "axes don't match" in c.message]
    assert crashed and "sqrt" in result.diagnosis


def test_a_float64_result_from_float32_inputs_is_diagnosed(tmp_path):
    result, _ = _check(tmp_path, "attention", TORCH, "return out, weights", "return out.double(), weights")
    assert "float64" in result.diagnosis and "dtype=x.dtype" in result.diagnosis


def test_a_float32_result_from_float64_inputs_is_diagnosed(tmp_path):
    result, _ = _check(tmp_path, "numpy/attention", NUMPY, "return weights @ v, weights",
                       "return (weights @ v).astype(np.float32), weights")
    assert "astype(np.float32)" in result.diagnosis


def test_a_failure_prints_its_two_values_with_the_digits_that_tell_them_apart():
    """Values that differ in the seventh digit were shown as "got 0.719295, expected 0.719295"."""
    import pytest
    import torch

    from checker.kit import Fail, compare

    got = torch.tensor([0.5, 0.71929512], dtype=torch.float64)
    want = torch.tensor([0.5, 0.71929548], dtype=torch.float64)
    with pytest.raises(Fail) as failure:
        compare(got, want, "y", tol=(1e-9, 1e-12))
    assert "got 0.7192951, expected 0.7192955" in str(failure.value)
    with pytest.raises(Fail) as failure:
        compare(torch.tensor([2.0]), torch.tensor([3.0]), "y")
    assert "got 2, expected 3" in str(failure.value)


def test_a_missing_parameter_is_explained_by_what_is_true_of_it(tmp_path):
    """Parameters the contract has and the module lacks: a layer built with bias=False, a submodule under
    another name, one module assigned to two attributes. Each gets its own cause, never another's."""
    mha = (ROOT / "solutions" / "torch" / "multi_head_attention.py").read_text(encoding="utf-8")
    decoder = (ROOT / "solutions" / "torch" / "decoder_layer.py").read_text(encoding="utf-8")
    for kata, source, old, new, says in (
            ("multi_head_attention", mha, "self.W_k = nn.Linear(d_model, d_model)",
             "self.W_k = nn.Linear(d_model, d_model, bias=False)", "W_k are built without a bias (bias=False)"),
            ("multi_head_attention", mha, "self.W_q = nn.Linear(d_model, d_model)",
             "self.q_proj = nn.Linear(d_model, d_model)\n        self.W_q = self.q_proj", "under other names"),
            ("decoder_layer", decoder, "self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)",
             "self.cross_attn = self.self_attn", "assigned to two attributes")):
        result, _ = _check(tmp_path, kata, source, old, new)
        assert result.status == "fail" and says in (result.diagnosis or ""), (kata, new, result.diagnosis)


def test_a_mistake_is_named_only_where_it_reproduces_every_wrong_case(tmp_path):
    """A hard-coded 1e-5 equals 'the default epsilon is 1e-5' on the cases that pass no epsilon, not on the one
    that passes 0.01: that mistake is not named; the relation that holds is (the argument has no effect)."""
    source = (ROOT / "solutions" / "numpy" / "layer_norm.py").read_text(encoding="utf-8")
    result, _ = _check(tmp_path, "numpy/layer_norm", source, "np.sqrt(var + epsilon)", "np.sqrt(var + 1e-5)")
    assert result.status == "fail"
    assert "has no effect" in result.diagnosis
    assert not any("default epsilon is 1e-5" in (c.diagnosis or "") for c in result.checks)
    # and the mistake itself, a default of 1e-5 that an explicit epsilon still overrides, is named
    result, _ = _check(tmp_path, "numpy/layer_norm", source, "epsilon: float = 1e-6", "epsilon: float = 1e-5")
    assert "default epsilon is 1e-5" in result.diagnosis


def test_a_probe_names_its_cause_only_where_its_premise_holds(tmp_path):
    """float16 overflow is the cause of zeros and NaN only if the same rows are right in float64: code that
    multiplies by the rms (divides by rsqrt) is wrong in every dtype and is not told to upcast."""
    source = (ROOT / "solutions" / "torch" / "rms_norm.py").read_text(encoding="utf-8")
    result, _ = _check(tmp_path, "rms_norm", source, "h = h * torch.rsqrt(", "h = h / torch.rsqrt(")
    assert result.status == "fail"
    assert not any("overflows" in (c.diagnosis or "") for c in result.checks), result.diagnosis
    # and the overflow itself, mean(x²) taken in float16, is still named
    result, _ = _check(tmp_path, "rms_norm", source, "h = x.to(torch.promote_types(x.dtype, torch.float32))", "h = x")
    assert any("overflows" in (c.diagnosis or "") for c in result.checks), [c.message for c in result.checks]


def test_a_method_that_hides_one_of_nn_modules_is_named_only_when_torch_cannot_call_it(tmp_path, monkeypatch):
    """_apply(self, x) breaks .to() and train(self) breaks eval(), pointed at their `def` lines; train(self,
    mode=True) calling super, a helper of another name, and torch's own subclasses' overrides are fine."""
    import importlib

    import torch

    from checker.sandbox.modules import shadowed

    (tmp_path / "shadowing.py").write_text(
        "import torch\n"
        "class Broken(torch.nn.Linear):\n"
        "    def _apply(self, x):\n        return x\n"
        "    @staticmethod\n    def train(x, y):\n        return x\n"
        "class Fine(torch.nn.Linear):\n"
        "    def train(self, mode=True):\n        return super().train(mode)\n"
        "    def project(self, x):\n        return x\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "shadowing", raising=False)  # a module of its own name: no other test's
    mine = importlib.import_module("shadowing")
    assert [(h["name"], h["line"], h["got"], h["want"]) for h in shadowed(mine.Broken, "shadowing")] == [
        ("_apply", 3, ["x"], ["fn", "recurse"]), ("train", 6, ["x", "y"], ["mode"])]
    assert shadowed(mine.Fine, "shadowing") == []
    assert shadowed(torch.nn.Linear, "torch.nn.modules.linear") == []


def test_a_wrong_shape_is_named_by_how_it_relates_to_the_contracts():
    """One mechanism for every kata: axes of size 1 left in, an axis not reduced away, an axis reduced away (named by
    the legend), the axes in another order, the right count of elements in another shape; nothing for the rest."""
    from checker.kit.compare import shape_relation

    assert "2 more dimensions of size 1" in str(shape_relation((1, 1, 5, 5), (5, 5), "(T, T)"))
    assert "1 more dimension of size 1" in str(shape_relation((3, 1), (3,), "(B,)"))
    assert "one axis more than the contract, of size 3" in str(shape_relation((3, 6, 5), (6, 5), "(D_in, D_out)"))
    assert str(shape_relation((2, 5, 5), (2, 3, 5, 5), "(B, H, T_q, T_k)")).startswith("axis H of (B, H, T_q, T_k) is missing")
    assert "one axis fewer" in str(shape_relation((2, 5, 5), (2, 3, 5, 5), "(same as q)"))
    assert "another order, (B, T, H, d) for (B, H, T, d)" in str(shape_relation((2, 5, 3, 4), (2, 3, 5, 4), "(B, H, T, d)"))
    assert "another order" in str(shape_relation((3, 6, 4), (4, 3, 6), "(same as y)"))
    assert "right number of elements" in str(shape_relation((2, 5, 12), (2, 3, 5, 4), "(B, H, T, d)"))
    assert shape_relation((3, 4), (3, 7), "(B, T_max)") is None


def test_a_shape_failure_gets_the_error_models_change_or_the_shapes_relation(tmp_path):
    """The shapes check asks the error model too (a keepdim or a squeeze is one change of the reference), and
    otherwise says how the wrong shape relates to the contract's, with the legend's axis names."""
    mha = (ROOT / "solutions" / "numpy" / "multi_head_attention.py").read_text(encoding="utf-8")
    result, _ = _check(tmp_path, "numpy/multi_head_attention", mha, "return combine_heads(out) @ Wo, weights",
                       "return combine_heads(out) @ Wo, weights.mean(axis=1)", drawn=False)
    assert result.status == "fail"
    assert said(result.diagnosis, "en").startswith("axis H of (B, H, T_q, T_k) is missing from yours")
    chinese = said(result.diagnosis, "zh")
    assert "轴" in chinese and "missing" not in chinese


def test_overflow_is_blamed_only_where_the_scores_overflow_without_the_mask(tmp_path):
    """NaN from scores of ~1000 is an exp without each row's max subtracted only where it shows without the mask
    too: a softmax over every key, hidden ones included, then renormalised, subtracts a max and still makes NaN."""
    renormalised = NUMPY.replace("scores = np.where(mask, scores, -np.inf)", "scores = scores + 0.0").replace(
        "weights = np.where(mask, weights, 0.0)  # (..., T_q, T_k)",
        "weights = np.where(mask, weights, 0.0); weights = weights / weights.sum(-1, keepdims=True)")
    result, _ = _check(tmp_path, "numpy/attention", renormalised, "    # 4) weighted sum", "    # 4) the weighted sum")
    assert result.status == "fail"
    report = "\n".join(str(c.diagnosis or "") for c in result.checks)
    assert "subtract each row's max" not in report


def test_an_argument_used_only_past_a_threshold_is_not_called_unused(tmp_path):
    """max(std, epsilon) changes nothing between two small epsilons, but it uses epsilon: a value far above the
    others tells it from a constant written into the code, which the same check still names."""
    ln = (ROOT / "solutions" / "numpy" / "layer_norm.py").read_text(encoding="utf-8")
    clamped, _ = _check(tmp_path, "numpy/layer_norm", ln, "np.sqrt(var + epsilon)", "np.maximum(np.sqrt(var), epsilon)")
    assert "does not use its epsilon argument" not in "\n".join(c.message for c in clamped.checks)
    written_in, _ = _check(tmp_path, "numpy/layer_norm", ln, "np.sqrt(var + epsilon)", "np.sqrt(var + 1e-6)")
    assert any("does not use its epsilon argument" in c.message for c in written_in.checks)


def test_a_contracts_raise_that_exists_under_another_condition_is_not_called_missing(tmp_path):
    """Floor for ceil in the count of new blocks: the code raises ValueError when no block is free, and runs past the
    table when two are free for three blocks' tokens. It is told its condition differs, not told to raise."""
    paged = (ROOT / "solutions" / "torch" / "paged_kv_cache.py").read_text(encoding="utf-8")
    result, _ = _check(tmp_path, "paged_kv_cache", paged, "needed = (seq_len + T + block_size - 1) // block_size",
                       "needed = (seq_len + T) // block_size")
    raising = [c for c in result.checks if "raises ValueError" in str(c.message) or "raised" in str(c.message)]
    assert result.status == "fail"
    said = "\n".join(str(c.diagnosis or "") for c in result.checks)
    assert "the condition it tests is not the contract's" in said
    assert "raise ValueError(...) for it" not in said, raising


def test_a_change_that_fits_one_case_only_by_its_sizes_is_not_said(tmp_path, monkeypatch):
    """RoPE's exponent over d/2, not d: at d_rope = 4, the reference with `// d` for `/ d` gives the same numbers
    (-2 // 4 = -1 = -2 / 2). MLA's explicit check judges one case's own call; its error model is held to the kata's
    other cases too (d_rope = 6 and 8), where that change is refuted, so it is not said."""
    monkeypatch.setenv("KATA_SEARCH_SCALE", "10")  # no search cut short: what is not said was refuted
    source = (ROOT / "solutions" / "torch" / "mla.py").read_text(encoding="utf-8")
    result, _ = _check(tmp_path, "mla", source, "/ d)  # (d/2,)", "/ (d / 2))  # (d/2,)")
    assert result.status == "fail"
    said = [result.diagnosis or ""] + [c.diagnosis or "" for c in result.checks]
    assert not [text for text in said if "integer division" in text], said
