"""Reading a report as a learner does (issue 26): which ASCII words a Chinese report holds that are not code, a
name or a number, and how many lines a report takes at 80 columns. tests/commands/test_chinese_reports.py and
test_server.py, tests/checks/test_variants.py and bench/reports.py share these rules.

A word of a Chinese report is allowed when it is
- code: inside `a code span`, in a traceback or what the user's code printed, in quoted data ('...', "...") or in
  the message of an exception the user's code raised (Python's and torch's words, not kata's);
- an identifier of the kata's stub or of the user's file (Q, d_k, self_weights, forward, masked_fill ...);
- tensor and shape notation (B, T_q, d_k), a number or a word with a digit (float32, q0, 1e-9, 2x3), a unit;
- a dtype, an exception's name, a file path, the name of a torch, NumPy or math function or module;
- a name: kata itself and its katas, the libraries, and the terms in NAMES and TERMS below, each with its reason;
- a keyword only code has (def, lambda, return), a value the user's code reads (lang="en").
"""

from __future__ import annotations

import functools
import io
import keyword
import re
import tokenize
from pathlib import Path

from conftest import ROOT

# Names: of the tool, of libraries, models, methods, papers and people. A name is not translated.
NAMES = {
    "kata",  # the tool's own name, as in `kata check`
    "Python", "PyTorch", "NumPy", "torch", "numpy", "np", "nn", "F", "math", "einsum", "CUDA", "GPU", "CPU", "Jupyter",
    "jax", "autograd", "Keras", "loralib", "minbpe", "HF", "TRL", "PEFT", "Hugging", "Face",
    "Transformer", "Transformers", "Decoder", "Encoder", "Block",  # the tutorials' titles keep them in English
    "Attention", "Is", "All", "You", "Need",  # 《论文深度解读：Attention Is All You Need》, the paper's title
    "Annotated",  # the Annotated Transformer, Harvard NLP's
    "GPT", "LLaMA", "Llama", "BERT", "Adam", "AdamW", "Noam", "Mistral", "Mixtral", "DeepSeek", "DeepSeekMath",
    "ALiBi", "PaLM", "Qwen", "Gemma", "Switch", "FlashAttention", "WordPiece",
    "SFT", "IPO", "SimPO", "SLiC", "DAPO", "Dr", "GEGLU", "rsLoRA",  # methods named by their papers (Dr. GRPO)
    "Vaswani", "Shazeer", "Sennrich", "Dauphin", "Xiong", "Press", "Su", "Kingma", "Loshchilov", "Hutter",
}

# Terms the Chinese tutorials and this project's Chinese statements write in English, untranslated: acronyms of
# the architectures and methods the katas are named after, and the few words used as they are.
TERMS = {
    "GQA", "MHA", "MQA", "MLA", "RoPE", "FFN", "LoRA", "BPE", "MoE", "RMSNorm", "LayerNorm", "BatchNorm", "SwiGLU",
    "GELU", "ReLU", "SiLU", "GLU", "KV", "DPO", "GRPO", "RLHF", "PPO", "KL", "NaN", "NaNs", "inf", "API",
    "ASCII", "UTF", "Pre", "Post", "LN", "QKV", "EOS", "BOS", "PAD", "UNK", "FLOPs", "FLOP",
    "softmax", "dropout", "token", "tokens", "batch", "embedding", "mask", "logits", "logit", "id", "ids", "top",
    "warmup", "teacher", "forcing",  # the statements' own Chinese: 3·warmup 步, teacher forcing
    "flash",  # flash attention, the kata's name
    "eps", "lr", "pos",  # ε, the learning rate and the position, as the formulas write them: PE(pos, 2i)
}

# Values the user's code reads as they are: tokenize(lang="en"), layout="interleaved", activation="gelu".
CODE_VALUES = {"en", "zh", "interleaved", "half", "relu", "gelu", "randn"}

# Python's keywords that only code has (not in, for, if, is, not, and, or: prose has those too).
KEYWORDS = {"def", "lambda", "return", "raise", "break", "continue", "else", "elif", "yield", "pass", "import"}

# Units after a number: 0.17 s, 378 µs, 4 GB.
UNITS = {"s", "ms", "ns", "us", "GB", "MB", "KB", "GiB", "MiB", "KiB"}

DTYPES = {"float", "float16", "float32", "float64", "bfloat16", "half", "double", "int", "int8", "int32", "int64",
          "long", "bool", "uint8", "complex64", "str", "list", "tuple", "dict", "None", "True", "False", "tensor",
          "Tensor", "ndarray", "object", "type"}

DEVICES = {"cpu", "cuda", "meta", "mps"}  # torch's names of devices, as in tensor.to("meta")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.lru_cache(maxsize=1)
def library_names() -> frozenset[str]:
    """The names of torch's, NumPy's and math's functions and modules (and a Tensor's methods)."""
    import math

    import numpy
    import torch
    import torch.nn.functional

    names = set()
    for module in (torch, torch.nn, torch.nn.functional, torch.Tensor, torch.linalg, numpy, numpy.linalg,
                   numpy.ndarray, numpy.random, math, torch.nn.Module):
        names.update(n for n in dir(module) if not n.startswith("__"))
    return frozenset(names)


def identifiers(source: str) -> set[str]:
    """Every name a Python file uses: its variables, attributes, functions and classes (not its comments)."""
    names = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                names.add(token.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        names.update(_WORD.findall(re.sub(r"#.*", "", source)))
    return names


@functools.lru_cache(maxsize=None)
def kata_names(kata) -> frozenset[str]:
    """A kata's own words: its name, its stub's identifiers and its reference's, the names of what it returns."""
    import importlib

    names = {kata.name, kata.track, *kata.name.split("_"), *kata.targets}
    spec = importlib.import_module(kata.checks_module)  # the names of what it returns: output, self_weights
    names.update(name for name, _ in getattr(spec, "OUTPUTS", None) or ())
    for folder in ("katas", "solutions"):
        path = ROOT / folder / kata.file
        if path.is_file():
            names |= identifiers(path.read_text(encoding="utf-8"))
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def every_kata_name() -> frozenset[str]:
    from checker import catalogue

    return frozenset(k.name for k in catalogue.all_katas())


# What is the user's or Python's text, or code, not kata's prose: code spans, quoted data, paths, the message of an
# exception (after its name, up to kata's own punctuation), command-line options, and expressions: calls (nested
# too), attributes, indexing, lists, keyword arguments with a literal, assignments, a statement's head, bitwise
# operands, lists and dicts, formulas in ASCII brackets of one- and two-letter names, U+FFFD.
_CODE_SPAN = re.compile(r"`[^`]*`")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # Python's quotes: data; Chinese quotes hold kata's words
_PATH = re.compile(r"\S*[/\\]\S*|\S+\.(?:py|ipynb|json|toml|md)\b")
_RAISED = re.compile(r"\b\w*(?:Error|Exception|Warning|Interrupt|Iteration)\b(?:: [^（）；。\u4e00-\u9fff]*|（[^（）]*）)")
_INNERMOST = re.compile(r"\w+(?:\.\w+)*\([^()（）]*\)|\((?:[^()（）A-Za-z]|(?<![A-Za-z])[A-Za-z]{1,2}(?![A-Za-z]))*\)"
                        r"|\[[^\[\]]*\]|\{[^{}]*\}")
_EXPRESSIONS = [re.compile(p) for p in (
    r"\w+(?:\.\w+)+|(?<![\w.])\.\w+",  # self.training, np.max, .weight
    r"(?<!\w)--?[a-z][\w-]*",  # --verbose
    r"\b\w+=(?:True|False|None|-?[\d.]+(?:e-?\d+)?)(?![\w.])",  # unbiased=False, eps=1e-5
    r"\b\w+ (?:=|<=|>=|==|\+=|&|\|) ",  # rewards = ..., causal & pad_mask
    r"\b(?:if|for|while|with) [^：，。；（）]*?:",  # if finished.all(): break
    r"\bU\+[0-9A-F]{4,6}\b",  # U+FFFD
)]
# The panel's sections that quote the user's run: after these headings, until a blank line.
QUOTING_HEADINGS = ("你的代码抛出了：", "你的文件无法加载：", "你的代码打印了：", "Your code raised:",
                    "Your file could not be loaded:", "Your code printed:")
_MARKS = ("✓", "✗", "?", "·", "→", "√", "×")
_EDGE = re.compile(r"^[│┃║]\s?|\s?[│┃║]\s*$")
_RULE = re.compile(r"^[\s─━═╭╮╰╯┏┓┗┛┳┻┡┩┃│├┤┼┌┐└┘╇╈]*$")


def paragraphs(report: str) -> list[str]:
    """The report's sentences as a learner reads them, each wrapped line joined to the one it continues: without
    the panel's border and its first line (the file's path), and without the sections quoting the user's run (its
    traceback, what it printed), which are Python's words and the user's."""
    out: list[str] = []
    current: list[str] = []
    quoting = path = False

    def close():
        if current:
            out.append(" ".join(current))
            current.clear()

    for raw in report.splitlines():
        if raw.startswith("╭"):  # a panel: its first line is the file checked
            close()
            quoting, path = False, True
            continue
        line = _EDGE.sub("", raw.rstrip())
        text = line.strip()
        if _RULE.fullmatch(line):  # a blank line, or a border: a quoted section ends with it
            close()
            quoting = False
            continue
        if path:  # the path wraps where the width ends, without a space: it ends with the file's suffix
            path = not re.search(r"\.\w+$", text)
            continue
        if any(text.startswith(h) for h in QUOTING_HEADINGS):
            close()
            quoting = True
            continue
        if quoting:
            continue
        if text.startswith(_MARKS) or "▸" in text:
            close()
        current.append(text)
    close()
    return out


def english_words(report: str, kata=None, source: str = "") -> list[str]:
    """The ASCII words of a Chinese report that are not code, a name or a number, in order, with repeats."""
    return [word for word, _ in english_in(report, kata, source)]


def english_in(report: str, kata=None, source: str = "") -> list[tuple[str, str]]:
    """Each English word of a Chinese report (as english_words) with the sentence it is in."""
    allowed = (NAMES | TERMS | CODE_VALUES | KEYWORDS | UNITS | DTYPES | DEVICES | library_names() | every_kata_name()
               | identifiers(source))
    if kata is not None:
        allowed |= kata_names(kata)
    found = []
    for said in paragraphs(report):
        if said.startswith("→"):  # → 第 18 行：out = x + sublayer(h), the user's line of code
            continue
        text = said
        for pattern in (_CODE_SPAN, _QUOTED, _PATH, _RAISED):
            text = pattern.sub(" ", text)
        while _INNERMOST.search(text):  # calls and brackets, the innermost first: sin(pos / 10000^(2i/D))
            text = _INNERMOST.sub(" ", text)
        for pattern in _EXPRESSIONS:
            text = pattern.sub(" ", text)
        for match in re.finditer(r"[A-Za-z0-9_][A-Za-z0-9_'-]*", text):
            word = match.group().strip("'-")
            if word and not all(_allowed(part, allowed) for part in word.split("-")):  # Pre-LN, top-k: each part
                found.append((word, said))
    return found


def _allowed(word: str, allowed: set[str]) -> bool:
    if not word or any(ch.isdigit() for ch in word):  # a number, or notation with one: q0, float32, 1e-9
        return True
    if len(word) == 1 or "_" in word:  # i, B, T_q, d_k, make_src_mask, the _i of Σ_i: notation and identifiers
        return True
    if re.fullmatch(r"d[A-Z]\w?|[A-Z][a-z]+(?:[A-Z][a-z]*)+", word):  # dA, dW: gradients; AddNorm: a class's name
        return True
    if word.endswith(("Error", "Exception", "Warning")):
        return True
    return word in allowed or word.lower() in _lower(frozenset(allowed))


@functools.lru_cache(maxsize=64)
def _lower(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


def kata_of(path: Path):
    """The kata a variant belongs to: checker/checks/TRACK_NAME/variants/FILE."""
    from checker import catalogue

    track, name = path.parent.parent.name.split("_", 1)
    return catalogue.find(name if track == catalogue.DEFAULT_TRACK else f"{track}/{name}")


def rendered(result, width: int = 80) -> dict[str, str]:
    """A result's report as `kata check` prints it at width columns without colour, in Chinese and in English (the
    result as the engine gives it, its sentences still messages)."""
    from rich.console import Console

    from checker.app import report
    from checker.lang import speaking

    texts = {}
    for lang in ("zh", "en"):
        out = io.StringIO()
        console = Console(file=out, width=width, no_color=True, highlight=False, force_terminal=False)
        with speaking(lang):
            report.print_results(console, [result])
        texts[lang] = out.getvalue()
    return texts


def held_to_40_lines(result) -> None:
    """A failing result's report, in both languages at 80 columns, fits in MOST_LINES (40) lines."""
    from checker.app.report import MOST_LINES

    for lang, text in rendered(result, width=80).items():
        assert "FAIL" in text.splitlines()[0] or "未通过" in text.splitlines()[0], text
        assert len(text.splitlines()) <= MOST_LINES, f"{result.file} ({lang}): {len(text.splitlines())} lines\n{text}"


def wrong_variants(kata) -> list[Path]:
    """A kata's wrong variants, in the order of their names."""
    return sorted((kata.folder / "variants").glob("wrong_*.py"))


def panels(output: str) -> dict[str, str]:
    """`kata check`'s output, split by kata: each panel by the kata's name in its title; the rest (the summary
    table of several katas) under ''."""
    found: dict[str, list[str]] = {"": []}
    name = ""
    for line in output.splitlines():
        title = re.match(r"╭─+\s+(\S+) · ", line)
        if title:
            name = title[1]
            found[name] = []
        found[name].append(line)
        if line.startswith("╰"):
            name = ""
    return {k: "\n".join(v) for k, v in found.items()}


def held_to_chinese(shown: dict[str, str], chosen: dict) -> None:
    """shown: each kata's panel of a report in Chinese at 80 columns, and the summary under '' (panels());
    chosen: kata id -> (kata, the file checked). Each fails, fits MOST_LINES, and holds no English word outside
    code, names and numbers."""
    from checker.app.report import MOST_LINES

    assert set(shown) - {""} == set(chosen), "every kata has its report"
    leaks = []
    for name, text in shown.items():
        kata, path = chosen.get(name, (None, None))
        source = path.read_text(encoding="utf-8") if path else ""
        assert name == "" or "未通过" in text.splitlines()[0], f"{path.name} does not fail:\n{text}"
        assert name == "" or len(text.splitlines()) <= MOST_LINES, f"{path.name}: over {MOST_LINES} lines:\n{text}"
        leaks += [f"{name} ({path.name if path else 'summary'}): {word!r} in: {said}"
                  for word, said in english_in(text, kata, source)]
    assert not leaks, f"{len(leaks)} English word(s) in Chinese reports:\n" + "\n".join(leaks)
