"""First divergence: for a composite kata, the first given sub-part whose input differs from the
reference's is named, with what it received instead; and no sub-part may run more often than in the
reference. Exercised on the torch encoder and decoder layers with the named mistakes switched off, so
the report must come from the recording alone."""

import pytest

from checker import catalogue, engine
from checker.checks import torch_decoder_layer, torch_encoder_layer
from conftest import ROOT

ENCODER = (ROOT / "solutions" / "torch" / "encoder_layer.py").read_text(encoding="utf-8")
DECODER = (ROOT / "solutions" / "torch" / "decoder_layer.py").read_text(encoding="utf-8")


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
    monkeypatch.setattr(torch_encoder_layer, "MISTAKES", ())
    monkeypatch.setattr(torch_decoder_layer, "MISTAKES", ())


def test_an_encoder_ffn_residual_from_the_layer_input_is_named(tmp_path, recording_only):
    path = _variant(tmp_path, ENCODER, "        sa_out, attn = self.self_attn(x, x, src_mask)",
                    "        x0 = x\n        sa_out, attn = self.self_attn(x, x, src_mask)")
    path.write_text(path.read_text().replace("x = self.norm2(x + self.dropout(self.ffn(x)))",
                                             "x = self.norm2(x0 + self.dropout(self.ffn(x)))"))
    result = engine.check_file(catalogue.find("encoder_layer"), path)
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
    result = engine.check_file(catalogue.find("decoder_layer"), path)
    assert result.status == "fail"
    assert result.diagnosis.startswith("first divergence: norm2 (argument 1) receives the layer's input y + "
                                       "cross_attn's output; expected norm1's output + cross_attn's output")


def test_a_part_called_twice_fails_and_the_reference_passes(tmp_path, recording_only):
    path = _variant(tmp_path, ENCODER, "x = self.norm2(x + self.dropout(self.ffn(x)))",
                    "h = self.ffn(x)\n        h = self.ffn(x)\n        x = self.norm2(x + self.dropout(h))")
    result = engine.check_file(catalogue.find("encoder_layer"), path)
    failed = [c.message for c in result.checks if not c.passed]
    assert result.status == "fail" and any("ffn is called 2 time(s)" in m for m in failed), failed
    assert engine.check_file(catalogue.find("encoder_layer"), ROOT / "solutions/torch/encoder_layer.py").status == "pass"
