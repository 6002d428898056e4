"""The language of kata's own sentences: --lang, else the locale. English and Chinese.

Two ways to write a sentence, one mechanism underneath:
- say(lang, key, **values): the screens' sentences, by key, from STRINGS below;
- t(english, **values): the verdict's sentences (check titles, failure messages, diagnoses), written
  in English where they are used, in the language being spoken (speaking(lang)). Each module that
  writes them keeps one table, _ZH = register({english template: Chinese template}), gettext's
  msgid style. Placeholders are named ({d_k}, never positional) and must match in both languages;
  tests/test_messages.py holds every module to that.
A sentence with no Chinese yet falls back to English. Statements and hints have their own files per
language (checker/statements/TRACK/NAME[.zh].md).
"""

from __future__ import annotations

import contextvars
import os
from contextlib import contextmanager
import sys

LANGUAGES = ("en", "zh")

STRINGS: dict[str, tuple[str, str]] = {
    # kata show
    "show.forbidden": ("Off limits in this kata: {names}.", "本题禁止使用：{names}。"),
    "show.hints": ("Hints: `kata hint {kata}` gives them one level at a time (concept, then shapes and steps, then "
                   "near-code); `kata show {kata} --hints` shows again the levels you have taken.",
                   "提示：`kata hint {kata}` 一次给一级（先讲概念，再讲形状与步骤，最后是接近代码的提示）；"
                   "`kata show {kata} --hints` 重新显示你已经看过的几级。"),
    "show.hints_taken": ("Hints you have taken ({taken} of {total}):", "你已经看过的提示（{taken}/{total}）："),
    "show.no_hints_taken": ("You have taken no hint for {kata} yet: `kata hint {kata}` gives the first.",
                            "你还没有看过 {kata} 的提示：`kata hint {kata}` 给出第一级。"),
    "show.file": ("Your file: {file} in your workspace.  Check it with `kata check {kata}`.",
                  "你的文件：工作区里的 {file}。用 `kata check {kata}` 检查。"),
    # kata hint
    "hint.level": ("Hint {level} of {total} ({name})", "提示 {level}/{total}（{name}）"),
    "hint.names": ("concept|shapes and steps|near-code", "概念|形状与步骤|接近代码"),
    "hint.more": ("Run `kata hint {kata}` again for the next level.", "再运行一次 `kata hint {kata}` 看下一级提示。"),
    "hint.last": ("That was the last hint. Still stuck? `kata solution {kata}` shows the reference.",
                  "提示已经全部给出。还是卡住？`kata solution {kata}` 显示参考答案。"),
    "hint.none": ("{kata} has no hints yet.", "{kata} 还没有提示。"),
    "locked": ("A drill is running until {until}: hints and solutions are locked "
               "(start a drill with --allow-hints to allow them).",
               "练习计时进行中（到 {until} 结束）：提示和答案已锁定（用 --allow-hints 开始计时练习可以解锁）。"),
    # kata solution
    "solution.ask": ("You have not passed {kata} yet. Show the reference answer anyway?",
                     "你还没有通过 {kata}。仍然显示参考答案吗？"),
    "solution.needs_yes": ("you have not passed {kata} yet; pass --yes to see the reference answer anyway",
                           "你还没有通过 {kata}；要查看参考答案请加 --yes"),
    "solution.title": ("Reference answer: {kata}", "参考答案：{kata}"),
    "solution.why": ("Why it is written this way", "为什么这样写"),
    "solution.pitfalls": ("Pitfalls it avoids", "它避开的易错点"),
    "not_shown": ("Nothing shown, nothing changed.", "没有显示，也没有改动。"),
    # kata reset
    "reset.ask": ("Replace {count} file(s) with the blank stub? Each current version is kept as a dated backup.",
                  "把 {count} 个文件换成空白模板吗？当前版本会按日期备份。"),
    "reset.needs_yes": ("reset replaces your file(s); pass --yes to do it without being asked",
                        "reset 会替换你的文件；不想被询问请加 --yes"),
    "reset.done": ("{kata}: blank stub restored; your version is kept in {backup}",
                   "{kata}：已恢复空白模板；你的版本保存在 {backup}"),
    "reset.restored": ("{kata}: blank stub restored", "{kata}：已恢复空白模板"),
    "reset.blank": ("{kata}: already the blank stub, left as it is", "{kata}：已经是空白模板，未改动"),
    # kata stats
    "stats.none": ("No history yet: check a kata (`kata check NAME`) or start a drill (`kata drill --list`).",
                   "还没有历史记录：先检查一个练习（`kata check NAME`）或开始计时练习（`kata drill --list`）。"),
    "stats.untouched": ("{count} kata(s) not tried yet; `kata next` suggests one.",
                        "还有 {count} 个练习没做过；`kata next` 会推荐一个。"),
    # kata next
    "next.title": ("What to practise now", "现在练什么"),
    "next.new": ("new: next on the learning path", "新练习：学习路线上的下一个"),
    "next.hard": ("review: hard last time ({why}), {ago}", "复习：上次做得吃力（{why}），{ago}"),
    "next.due": ("review: passed {ago}, due again", "复习：{ago}通过，该复习了"),
    "next.later": ("review early: next due in {days} day(s)", "提前复习：{days} 天后到期"),
    "next.done": ("Everything is passed and nothing is due; a drill keeps it fresh: `kata drill --list`.",
                  "全部通过，暂时没有要复习的；计时练习能保持手感：`kata drill --list`。"),
    "ago.today": ("today", "今天"),
    "ago.days": ("{days} day(s) ago", "{days} 天前"),
    "why.solution": ("you looked at the solution", "看了答案"),
    "why.hints": ("{count} hint(s)", "用了 {count} 个提示"),
    "why.attempts": ("{count} attempts", "尝试了 {count} 次"),
    "why.not_green": ("not green in a drill", "计时练习中没有通过"),
    # kata drill and kata watch
    "drill.presets": ("Drill presets", "计时练习预设"),
    "drill.col.preset": ("preset", "预设"),
    "drill.col.minutes": ("minutes", "分钟"),
    "drill.col.what": ("what", "内容"),
    "drill.col.katas": ("katas", "练习"),
    "drill.random": ("random: difficulty {levels}", "随机：难度 {levels}"),
    "drill.usage": ("kata drill PRESET, or kata drill KATA... [--minutes M]; --allow-hints unlocks hints.",
                    "kata drill 预设名，或 kata drill 练习名…… [--minutes M]；--allow-hints 可以解锁提示。"),
    "drill.files": ("Drill {id}: {minutes:g} min. Your files (a fresh stub each):",
                    "计时练习 {id}：{minutes:g} 分钟。你的文件（每个都是新的空白模板）："),
    "drill.left": ("{time} left", "剩余 {time}"),
    "drill.report": ("Drill report", "练习报告"),
    "drill.end.time": ("Time is up.", "时间到。"),
    "drill.end.done": ("All green!", "全部通过！"),
    "drill.end.quit": ("Drill ended.", "练习结束。"),
    "drill.end.interrupted": ("Interrupted (Ctrl-C); the report is written all the same.",
                              "已中断（Ctrl-C）；报告照常保存。"),
    "drill.score": ("Score {score}/100", "得分 {score}/100"),
    "drill.first": ("Your first '{preset}' drill: run it again later to compare.",
                    "这是你第一次做“{preset}”：以后再做一次就能对比。"),
    "drill.compare": ("Earlier '{preset}' drills ({count}): last {last}, best {best}. Scores so far: {trend}",
                      "之前的“{preset}”练习（{count} 次）：上次 {last}，最好 {best}。历次得分：{trend}"),
    "drill.kept": ("Your files stay in {folder}; `kata stats` lists every drill.",
                   "你的文件保存在 {folder}；`kata stats` 列出所有计时练习。"),
    "watch.keys": ("saving re-checks · r or Enter re-check · q quit", "保存即检查 · r 或回车 重新检查 · q 退出"),
    "watch.watching": ("Watching {count} file(s) in {folder}", "正在监视 {folder} 中的 {count} 个文件"),
    "watch.next": ("Passed. Next: {kata} ({file})", "通过了。下一个：{kata}（{file}）"),
    "ready": ("getting ready (importing torch) ...", "准备中（导入 torch）……"),

    # kata init and kata check
    "init.ready": ("Workspace ready at {path}", "工作区已就绪：{path}"),
    "init.copied": ("{count} stub(s) copied; files you already had were left alone.",
                    "复制了 {count} 个空白模板；你已有的文件保持不变。"),
    "init.none": ("Every stub was already there; nothing was overwritten.", "所有空白模板都已存在；没有覆盖任何文件。"),
    "init.next": ("Next: open {file}, write the body, then run kata check attention (from inside {path}, or with "
                  "--workspace).",
                  "下一步：打开 {file}，写好函数体，然后运行 kata check attention（在 {path} 里运行，或者加 --workspace）。"),
    "check.progress": ("checking {kata} ...", "正在检查 {kata} ……"),
    # kata stats: the columns
    # kata list
    "list.track": ("{track} track", "{track} 路线"),
    "list.track_llm": ("{track} track, beyond the seeds (modern LLMs)", "{track} 路线，教程之外（现代大模型）"),
    "list.track_llm2": ("{track} track, the second LLM set (fine-tuning, RLHF, serving)",
                        "{track} 路线，第二组大模型题（微调、RLHF、推理部署）"),
    "list.new": ("new", "新"),
    # the stages of a check, as the report names them
    "stage.structure": ("structure", "结构"),
    "stage.shapes": ("shapes", "形状"),
    "stage.masking": ("masking", "掩码"),
    "stage.numerics": ("numerics", "数值"),
    "stage.gradients": ("gradients", "梯度"),
    "stage.properties": ("properties", "性质"),
    "stage.hygiene": ("hygiene", "规范"),
    # a workspace that cannot be written: read-only, or on a full disk
    "unwritable.readonly": ("{folder} is read-only: `kata {command}` needs to write there. Make it writable, "
                            "or use another workspace (--workspace DIR).",
                            "{folder} 是只读的：`kata {command}` 需要在这里写入。请把它改成可写，"
                            "或者换一个工作区（--workspace DIR）。"),
    "unwritable.full": ("the disk holding {folder} is full: `kata {command}` needs to write there. "
                        "Free some space and run it again.",
                        "{folder} 所在的磁盘已满：`kata {command}` 需要在这里写入。请腾出一些空间后再运行。"),
    "unrecorded.readonly": ("{folder} is read-only, so nothing was recorded; everything else works as usual.",
                            "{folder} 是只读的，所以这次没有记录；其他一切照常。"),
    "unrecorded.full": ("the disk holding {folder} is full, so nothing was recorded; everything else works as usual.",
                        "{folder} 所在的磁盘已满，所以这次没有记录；其他一切照常。"),
}


def say(lang: str, key: str, **values) -> str:
    english, chinese = STRINGS[key]
    return (chinese if lang == "zh" and chinese else english).format(**values)


def language(choice: str | None = None) -> str:
    """--lang if given, else KATA_LANG, else the locale (LC_ALL, LC_MESSAGES, LANG; on Windows, where
    these are usually unset, the system's), else English."""
    if choice:
        return choice
    chosen = os.environ.get("KATA_LANG", "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    if chosen:
        from checker.terminal import UsageError

        raise UsageError(f"KATA_LANG={chosen} is not a language of kata; use one of {', '.join(LANGUAGES)}")
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "zh" if _chinese(_system_locale()) else "en"


def chosen_language(argv: list[str]) -> str:
    """The language to speak before the command line is parsed (argparse's own usage and errors speak it
    too): --lang zh or --lang=zh in argv, else KATA_LANG, else the locale."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else arg.partition("=")[2]
        if arg.startswith("--lang") and value in LANGUAGES:
            return value
    try:
        return language()
    except Exception:  # noqa: BLE001 - a bad KATA_LANG: said by the command itself
        return "en"


def _chinese(name: str) -> bool:
    """zh_CN, zh-Hans, Chinese (Simplified)_China: the names locales go by on the three systems."""
    return name.lower().startswith(("zh", "chinese"))


def _system_locale() -> str:
    """Windows: the user's locale name (e.g. zh-CN), which no environment variable holds. Elsewhere ''."""
    if sys.platform != "win32":
        return ""
    import ctypes

    name = ctypes.create_unicode_buffer(85)  # LOCALE_NAME_MAX_LENGTH
    if ctypes.windll.kernel32.GetUserDefaultLocaleName(name, len(name)):
        return name.value
    import locale

    return locale.getlocale()[0] or ""



# ----------------------------------------------------------------------------- the verdict's sentences

_speaking: contextvars.ContextVar[str] = contextvars.ContextVar("kata_language", default="en")
ZH: dict[str, str] = {}  # every registered table, merged: English template -> Chinese template


def register(table: dict[str, str]) -> dict[str, str]:
    """Add a module's table to the one lookup t() uses; returns the table."""
    ZH.update(table)
    return table


@contextmanager
def speaking(lang: str):
    """Within the block, t() speaks lang (the engine wraps a whole check run in it)."""
    token = _speaking.set(lang)
    try:
        yield
    finally:
        _speaking.reset(token)


def speak(lang: str) -> None:
    """Speak lang from now on, in this thread: a long-lived command (watch, drill) sets it once."""
    _speaking.set(lang)


def spoken() -> str:
    return _speaking.get()


def t(english: str, **values) -> str:
    """english, or its Chinese while zh is spoken, with the named placeholders filled in."""
    template = ZH.get(english, english) if _speaking.get() == "zh" else english
    return template.format(**values) if values else template
