"""First divergence: for a composite kata, the first given sub-part whose input differs from the
reference's is named, with what it received instead; and no sub-part may run more often than in the
reference. Exercised on the encoder and decoder layers of both tracks with the named mistakes switched
off, so the report must come from the recording alone; a residual from the wrong tensor fails numerics
(diagnosed there) and no masking check."""

import pytest
from checker import catalogue, engine
from checker.app import report
from checker.checks.numpy_decoder_layer import checks as numpy_decoder_layer
from checker.checks.numpy_encoder_layer import checks as numpy_encoder_layer
from checker.checks.numpy_transformer_block import checks as numpy_transformer_block
from checker.checks.torch_decoder_layer import checks as torch_decoder_layer
from checker.checks.torch_encoder_layer import checks as torch_encoder_layer
from conftest import ROOT, run_json, variant

pytestmark = pytest.mark.usefixtures("meta_kernels")  # forked checks inherit them (tests/conftest.py)

ENCODER = (ROOT / "solutions" / "torch" / "encoder_layer.py").read_text(encoding="utf-8")
DECODER = (ROOT / "solutions" / "torch" / "decoder_layer.py").read_text(encoding="utf-8")
NP_ENCODER = (ROOT / "solutions" / "numpy" / "encoder_layer.py").read_text(encoding="utf-8")
NP_DECODER = (ROOT / "solutions" / "numpy" / "decoder_layer.py").read_text(encoding="utf-8")
NP_BLOCK = (ROOT / "solutions" / "numpy" / "transformer_block.py").read_text(encoding="utf-8")


def _variant(tmp_path, source, old, new, name="mine.py"):
    assert old in source
    path = tmp_path / name
    path.write_text(source.replace(old, new), encoding="utf-8")
    return path


@pytest.fixture
def recording_only(monkeypatch):
    """The layers' parts recorded, the named mistakes silenced: a diagnosis can only be the divergence."""
    monkeypatch.setattr(torch_encoder_layer, "PARTS", ("self_attn", "ffn", "norm1", "norm2"), raising=False)
    monkeypatch.setattr(torch_decoder_layer, "PARTS", ("self_attn", "cross_attn", "ffn", "norm1", "norm2", "norm3"),
                        raising=False)
    for module in (torch_encoder_layer, torch_decoder_layer, numpy_encoder_layer, numpy_decoder_layer,
                   numpy_transformer_block):
        monkeypatch.setattr(module, "MISTAKES", ())


def _no_masking_failure(result):
    assert not [c for c in result.checks if c.stage == "masking" and not c.passed], "a wiring mistake is no masking one"


def test_an_encoder_ffn_residual_from_the_layer_input_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, ENCODER, "        sa_out, attn = self.self_attn(x, x, src_mask)",
                    "        x0 = x\n        sa_out, attn = self.self_attn(x, x, src_mask)")
    path.write_text(path.read_text().replace("x = self.norm2(x + self.dropout(self.ffn(x)))",
                                             "x = self.norm2(x0 + self.dropout(self.ffn(x)))"))
    result = report.drawn(engine.check_file(catalogue.find("encoder_layer"), path))
    assert result.status == "fail"
    assert result.diagnosis == ("first divergence: norm2 (argument 1) receives the layer's input x + ffn's output; "
                                "expected norm1's output + ffn's output")
    assert not [c for c in result.checks if c.stage == "masking" and not c.passed], "a wiring mistake is no masking one"
    wrong_line = 1 + next(i for i, line in enumerate(path.read_text().splitlines()) if "norm2(x0 +" in line)
    assert {c.line for c in result.checks if c.name == "numerics: matches the reference in float64"} == {wrong_line}, \
        "the report points at the line that feeds norm2"


def test_a_decoder_cross_attention_residual_from_the_layer_input_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, DECODER, "        sa_out, self_weights = self.self_attn(y, y, tgt_mask)",
                    "        y0 = y\n        sa_out, self_weights = self.self_attn(y, y, tgt_mask)")
    path.write_text(path.read_text().replace("y = self.norm2(y + self.dropout(ca_out))",
                                             "y = self.norm2(y0 + self.dropout(ca_out))"))
    result = report.drawn(engine.check_file(catalogue.find("decoder_layer"), path))
    assert result.status == "fail"
    assert result.diagnosis.startswith("first divergence: norm2 (argument 1) receives the layer's input y + "
                                       "cross_attn's output; expected norm1's output + cross_attn's output")
    _no_masking_failure(result)


def test_a_part_called_twice_fails_and_the_reference_passes(tmp_path, recording_only):
    path = _variant(tmp_path, ENCODER, "x = self.norm2(x + self.dropout(self.ffn(x)))",
                    "h = self.ffn(x)\n        h = self.ffn(x)\n        x = self.norm2(x + self.dropout(h))")
    result = report.drawn(engine.check_file(catalogue.find("encoder_layer"), path))
    failed = [c.message for c in result.checks if not c.passed]
    assert result.status == "fail" and any("ffn is called 2 times" in m for m in failed), failed
    assert engine.check_file(catalogue.find("encoder_layer"), ROOT / "solutions/torch/encoder_layer.py").status == "pass"


def test_a_numpy_encoder_ffn_residual_from_the_layer_input_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, NP_ENCODER, "return add_and_norm(out1, ffn, gamma2_ln, beta2_ln)",
                    "return add_and_norm(x, ffn, gamma2_ln, beta2_ln)")
    result = report.drawn(engine.check_file(catalogue.find("numpy/encoder_layer"), path))
    assert result.status == "fail"
    assert result.diagnosis.startswith("first divergence: add_and_norm call 2 (its argument x) receives the layer's "
                                       "input x; expected add_and_norm call 1's output; ")  # where, then what:
    assert "yours behaves as `return add_and_norm(x, ffn, gamma2_ln, beta2_ln)`" in result.diagnosis  # error model
    _no_masking_failure(result)
    wrong_line = 1 + next(i for i, line in enumerate(path.read_text().splitlines()) if "add_and_norm(x, ffn" in line)
    assert {c.line for c in result.checks if c.name == "numerics: matches the reference in float64"} == {wrong_line}


def test_a_numpy_decoder_cross_attention_residual_from_the_layer_input_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, NP_DECODER, "out2 = add_and_norm(out1, a2, gamma2_ln, beta2_ln)",
                    "out2 = add_and_norm(x, a2, gamma2_ln, beta2_ln)")
    result = report.drawn(engine.check_file(catalogue.find("numpy/decoder_layer"), path))
    assert result.status == "fail"
    assert result.diagnosis.startswith("first divergence: add_and_norm call 2 (its argument x) receives the layer's "
                                       "input x; expected add_and_norm call 1's output; ")  # where, then what:
    assert "yours behaves as `out2 = add_and_norm(x, a2, gamma2_ln, beta2_ln)`" in result.diagnosis  # error model
    _no_masking_failure(result)


def test_a_numpy_decoder_cross_attention_fed_the_wrong_memory_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, NP_DECODER, "a2, _ = multi_head_attention(out1, encoder_output, encoder_output,",
                    "a2, _ = multi_head_attention(out1, out1, out1,")
    result = report.drawn(engine.check_file(catalogue.find("numpy/decoder_layer"), path))
    assert result.status == "fail"
    assert "first divergence: multi_head_attention call 2 (its argument k) receives add_and_norm call 1's output; " \
           "expected the encoder memory encoder_output" in result.diagnosis, result.diagnosis


def test_a_numpy_block_ffn_residual_from_the_attention_output_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, NP_BLOCK, "return self.norm2.forward(x + ff_output)",
                    "return self.norm2.forward(attn_output + ff_output)")
    result = report.drawn(engine.check_file(catalogue.find("numpy/transformer_block"), path))
    assert result.status == "fail"
    assert result.diagnosis == ("first divergence: norm2 (its argument x) receives attention's output + ff's output; "
                                "expected norm1's output + ff's output")
    _no_masking_failure(result)


def test_a_numpy_part_called_twice_fails_and_the_reference_passes(tmp_path):
    path = _variant(tmp_path, NP_ENCODER, "    ffn = feed_forward_network(out1, W1_ffn, b1_ffn, W2_ffn, b2_ffn)",
                    "    ffn = feed_forward_network(out1, W1_ffn, b1_ffn, W2_ffn, b2_ffn)\n"
                    "    ffn = feed_forward_network(out1, W1_ffn, b1_ffn, W2_ffn, b2_ffn)")
    result = report.drawn(engine.check_file(catalogue.find("numpy/encoder_layer"), path))
    failed = [c.message for c in result.checks if not c.passed]
    assert result.status == "fail" and any("feed_forward_network is called 2 times" in m for m in failed), failed
    assert engine.check_file(catalogue.find("numpy/encoder_layer"), ROOT / "solutions/numpy/encoder_layer.py").status \
        == "pass"


@pytest.mark.parametrize("which", ["torch_encoder_layer/wrong_ffn_residual_from_sa_out",
                                     "torch_decoder_layer/wrong_cross_residual_from_self_attention",
                                     "numpy_encoder_layer/wrong_ffn_residual_from_attention",
                                     "numpy_decoder_layer/wrong_cross_residual_from_x"])
def test_through_the_cli_a_residual_from_the_wrong_tensor_fails_numerics_named_and_no_masking_check(which,
                                                                                                     workspace):
    folder, name = which.split("/")
    track, kata = folder.split("_", 1)
    (workspace / track / f"{kata}.py").write_text(variant(folder, name).read_text(
        encoding="utf-8"), encoding="utf-8")
    proc, doc = run_json("check", kata if track == "torch" else f"{track}/{kata}", "--workspace", workspace)
    (result,) = doc["katas"]
    assert result["status"] == "fail", proc.stderr
    failed = {c["stage"] for c in result["checks"] if c["status"] not in ("pass", "followup")}
    assert "numerics" in failed and "masking" not in failed, failed
    assert "residual" in result["diagnosis"] or result["diagnosis"].startswith(("first divergence: norm",
                                                                              "first divergence: add_and_norm")), result
