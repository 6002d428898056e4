"""Reads a kata's statement (the one reader, for show, hint and solution) and draws it.

Reading: the Markdown in the language asked for, else in English; its sections and their items.
Drawing: the small part of Markdown the statements use, without markdown-it: headings, paragraphs,
lists, tables, code blocks (fenced, also under a list item as the near-code hint has them, or indented),
`code` and **bold**. Code is never re-flowed: a block keeps its lines, a `code` span moves whole to the
next line. rich.markdown would do it too, but importing it costs ~45 ms, which `kata show` cannot afford
(issue 5: at most twice `python -c "import rich.console"`).
"""

from __future__ import annotations

import ast
import re

from rich.console import Group
from rich.text import Text

from checker.catalogue import Kata
from checker.lang import read_catalogue, speaking, tr
from checker.app.terminal import Code, Hanging, Wrapped, code_span

# ----------------------------------------------------------------------------- reading

HINTS = ("## Hints", "## 提示")
PITFALLS = ("## Pitfalls", "## 易错点")
_NUMBERED = re.compile(r"\s*\d+\. (.*)")  # 1. a hint
_BULLET = re.compile(r"- (.*)")  # - a pitfall


# The one policy for float32 internals, written once and shown in the Pitfalls of every kata whose float64
# numerics are checked by the standard checks (those that accept it: checker.kit.FLOAT32_INTERNALS).
FLOAT32_POLICY = ("Float32 arithmetic inside on float64 input (a softmax or a norm's statistics in float32, as LLaMA "
                  "and Hugging Face write them for float16 models) is an accepted variant in every kata: held to 1e-5 "
                  "instead of float64's tolerance, and named in the report. The reference keeps the input's dtype "
                  "throughout.")
_STANDARD_NUMERICS = re.compile(r"^OUTPUTS\b", re.MULTILINE)


def read(kata: Kata, lang: str) -> tuple[str, str]:
    """The statement's Markdown in lang if there is one, else in English: (text, its language), with the
    float32 policy among its pitfalls where it applies."""
    if not kata.statement_path(lang).exists():
        lang = "en"
    text = kata.statement_path(lang).read_text(encoding="utf-8")
    checks = kata.folder / "checks.py"
    if checks.is_file() and _STANDARD_NUMERICS.search(checks.read_text(encoding="utf-8")):
        lines = text.splitlines()
        start, end = _bounds(lines, PITFALLS)
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        if start < len(lines):
            with speaking(lang):
                text = "\n".join(lines[:end] + [f"- {tr(FLOAT32_POLICY)}"] + lines[end:]) + "\n"
    return text, lang


def _bounds(lines: list[str], headings: tuple[str, ...]) -> tuple[int, int]:
    """(the line of the first of these headings, the line of the next '## ' heading); both len(lines) if absent."""
    start = next((i for i, line in enumerate(lines) if line.strip() in headings), len(lines))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start, end


def section(markdown: str, headings: tuple[str, ...]) -> list[str]:
    """The lines under the first of these headings, up to the next '## ' heading."""
    lines = markdown.splitlines()
    start, end = _bounds(lines, headings)
    return lines[start + 1:end]


def without(markdown: str, headings: tuple[str, ...]) -> str:
    """The statement with the section under the first of these headings left out (kata show: the hints)."""
    lines = markdown.splitlines()
    start, end = _bounds(lines, headings)
    return "\n".join(lines[:start] + lines[end:]).rstrip() + "\n"


def items(lines: list[str], first: re.Pattern) -> list[str]:
    """The list items; `first` matches an item's first line. An item's continuation lines are joined with
    spaces, except a fenced code block indented under it, which is kept line by line (less the fence's
    indentation), after a blank line: "3. text" then "   ```python" ... "   ```" gives "text\n\n```python\n...\n```"."""
    found: list[str] = []
    fence = None  # the indentation of the open code block's fence, if one is open
    paragraph = False  # the next line of text starts a paragraph of its own (after a code block)
    for line in lines:
        if fence is not None:
            found[-1] += "\n" + (line[fence:] if not line[:fence].strip() else line.lstrip())
            if line.strip().startswith("```"):
                fence, paragraph = None, True
            continue
        match = first.match(line)
        if match:
            found.append(match[1].strip())
            paragraph = False
        elif found and line.lstrip().startswith("```"):
            fence = len(line) - len(line.lstrip())
            found[-1] += "\n\n" + line.strip()
        elif found and line.strip():
            found[-1] += ("\n\n" if paragraph else " ") + line.strip()
            paragraph = False
    return found


def hints(kata: Kata, lang: str = "en") -> list[str]:
    """The numbered items under Hints: concept, then shapes and steps, then near-code."""
    return hints_in(read(kata, lang)[0])


def hints_in(markdown: str) -> list[str]:
    return items(section(markdown, HINTS), _NUMBERED)


def pitfalls(kata: Kata, lang: str = "en") -> list[str]:
    """The bullet items under Pitfalls."""
    return items(section(read(kata, lang)[0], PITFALLS), _BULLET)


# ----------------------------------------------------------------------------- the reference's steps

STEP = re.compile(r"#\s*(\d+)\)\s*(.+)")


def steps(source: str, lang: str = "en", kata: Kata | None = None) -> list[str]:
    """The reference answer's numbered step comments (`# 1) project`), each under the function it is in
    when several functions have steps; else the first line of each top-level docstring. In lang: every
    step has its Chinese in the kata's catalogue, keyed by its English (tests/checks/test_statement.py holds that)."""
    tree = ast.parse(source)
    functions = [(f"{cls.name}.{node.name}" if cls else node.name, node.lineno, node.end_lineno)
                 for cls in [None, *(n for n in tree.body if isinstance(n, ast.ClassDef))]
                 for node in (tree.body if cls is None else cls.body) if isinstance(node, ast.FunctionDef)]
    found = []  # (the function a step is in, "N) text")
    for number, line in enumerate(source.splitlines(), 1):
        match = STEP.search(line)
        if match:
            where = next((name for name, start, end in functions if start <= number <= end), "")
            found.append((where, match[1], match[2].strip()))
    with speaking(lang):
        if kata is not None:
            read_catalogue(kata.checks_module)
        if not found:
            return [f"{n.name}: {tr(ast.get_docstring(n).splitlines()[0])}" for n in tree.body
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(n)]
        several = len({where for where, _, _ in found}) > 1
        lines, last = [], None
        for where, number, text in found:
            if several and where != last:
                lines.append(f"{where}:")
                last = where
            lines.append(f"{'  ' if several else ''}{number}) {tr(text)}")
        return lines




# ----------------------------------------------------------------------------- drawing

_INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*)")


def inline(line: str, style: str = "") -> Text:
    text = Text(style=style)
    for part in _INLINE.split(line):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            text.append(code_span(part[1:-1]), style="bold cyan")  # wrap moves it whole to the next line
        elif part.startswith("**") and part.endswith("**") and len(part) > 3:
            text.append(part[2:-2], style="bold")
        else:
            text.append(part)
    return text


def _table(rows: list[str]):
    from rich.table import Table  # only a statement with a table pays for it

    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    body = [r for r in cells[1:] if not all(set(c) <= set("-: ") for c in r)]
    table = Table(show_lines=False)
    for head in cells[0]:
        table.add_column(Wrapped(inline(head)))
    for r in body:
        table.add_row(*(Wrapped(inline(c)) for c in r))
    return table


def _starts_block(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("#", "|", "```", "- ")) or bool(re.match(r"\d+\. ", stripped))


def render(markdown: str) -> Group:
    """The Markdown drawn. Code blocks (fenced, also when indented under a list item, or indented by four
    spaces) are drawn line by line, never wrapped: print the group with crop=False, so that a line longer
    than the terminal runs past its edge instead of being cut."""
    parts: list = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            indent = len(line) - len(line.lstrip())
            end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```")), len(lines))
            code = [x[indent:] if not x[:indent].strip() else x.lstrip() for x in lines[i + 1:end]]
            parts.append(Code("\n".join(code), indent + 4))
            i = end + 1
        elif line.startswith("    ") and line.strip():
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            block = "\n".join(x[4:] for x in lines[i:end]).rstrip("\n")
            parts += [Code(block, 4), Text("")]
            i = end
        elif line.startswith("|"):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            parts.append(_table(lines[i:end]))
            i = end
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            title = line.lstrip("#").strip()
            parts.append(Wrapped(inline(title, "bold underline" if level == 1 else "bold magenta")))
            i += 1
        elif not line.strip():
            parts.append(Text(""))
            i += 1
        else:  # a paragraph or a list item, with its continuation lines
            end = i + 1
            while end < len(lines) and lines[end].strip() and not _starts_block(lines[end]):
                end += 1
            joined = " ".join([line.rstrip()] + [x.strip() for x in lines[i + 1:end]])
            indent = len(joined) - len(joined.lstrip())
            bullet = re.match(r"(\s*)(- |\d+\. )", joined)
            if bullet:
                marker = "• " if bullet.group(2) == "- " else bullet.group(2)
                parts.append(Hanging(" " * indent + marker, inline(joined[bullet.end():])))
            else:
                parts.append(Wrapped(inline(joined)))
            i = end
    return Group(*parts)


def numbered(levels: list[str]) -> str:
    """Hints as one numbered Markdown list (kata show --hints), a code block indented under its item."""
    return "\n".join(f"{i}. " + level.replace("\n", "\n" + " " * len(f"{i}. ")) for i, level in enumerate(levels, 1))
