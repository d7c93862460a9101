"""The interactive consultation: follow-up questions one at a time (Enter accepts the default, "why" explains),
the answer, then "how N" to show the rules behind a line. Reads lines from any text stream."""

from __future__ import annotations

import re
import time
from typing import Any, Callable, TextIO

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.questions import AnswerError, Question, apply_answers, parse_answer, plan_questions
from gpu_advisor.ask.report import fmt_value
from gpu_advisor.cli.terminal import render_how
from gpu_advisor.cli.textui import Style
from gpu_advisor.util.i18n import section_label

WHY_WORDS = {"why", "why?", "为什么", "为什么？", "为啥", "?", "？", "w"}
SKIP_WORDS = {"skip", "跳过", "不知道", "-"}
DONE_WORDS = {"done", "q", "quit", "好了", "够了", "结束", "answer", "直接回答"}
HOW_RE = re.compile(r"^\s*(?:how|怎么来的|依据|为何)\s*(\d+)?\s*[?？]?\s*$", re.IGNORECASE)
WHAT_IF_SECONDS = 4.0

TEXT = {
    "intro": ("A few questions change the answer most ({n} at most). Enter accepts the default, "
              "'why' explains a question, 'skip' leaves it to the advisor, 'done' answers now.",
              "以下几个问题对结果影响最大（最多 {n} 个）。直接回车接受默认值，输入“为什么”查看原因，"
              "“跳过”交给顾问决定，“好了”直接给出答案。"),
    "default": ("default", "默认"), "changes": ("It changes", "它影响"),
    "what_if": ("With each choice the advisor would pick", "按各选项，顾问会选择"),
}


def t(key: str, lang: str, **kw: Any) -> str:
    en, zh = TEXT[key]
    return (zh if lang == "zh" else en).format(**kw)


class Session:
    """One consultation over a pair of streams; `recommend(fields, lang)` runs the advisor."""

    def __init__(self, stdin: TextIO, stdout: TextIO, lang: str, color: bool,
                 recommend: Callable[[dict[str, Any], str], Any]) -> None:
        self.stdin, self.stdout, self.lang = stdin, stdout, lang
        self.style = Style(color)
        self.recommend = recommend

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def read(self, prompt: str) -> str | None:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        return None if line == "" else line.strip()

    def follow_up(self, parsed: ParsedQuestion) -> dict[str, Any]:
        """Ask the planned questions; returns {field: value} (None = advisor's default)."""
        planned = plan_questions(parsed)
        answers: dict[str, Any] = {}
        if planned:
            self.say(self.style(t("intro", self.lang, n=len(planned)), "dim"))
        for i, q in enumerate(planned, start=1):
            result = self.ask(q, i, len(planned), parsed, answers)
            if result is _DONE:
                break
            answers[q.field] = result
        return answers

    def ask(self, q: Question, i: int, n: int, parsed: ParsedQuestion, answers: dict[str, Any]) -> Any:
        lang = self.lang
        self.say()
        self.say(self.style(f"({i}/{n}) {q.label.get(lang)}", "bold") + " — " + q.text.get(lang))
        for k, choice in enumerate(q.choices):
            mark = " *" if choice.value == q.default else ""
            self.say(f"   {chr(ord('a') + k)}) {choice.label.get(lang)}{mark}")
        prompt = f"[{t('default', lang)}: {q.default_label(lang)}] > "
        while True:
            line = self.read(prompt)
            if line is None or line == "":
                return q.default if line == "" else _DONE
            low = line.lower()
            if low in WHY_WORDS:
                self.explain(q, parsed, answers)
            elif low in SKIP_WORDS:
                return None
            elif low in DONE_WORDS:
                return _DONE
            else:
                try:
                    return parse_answer(q, line)
                except AnswerError as exc:
                    self.say(self.style(exc.text.get(lang), "yellow"))

    def explain(self, q: Question, parsed: ParsedQuestion, answers: dict[str, Any]) -> None:
        lang = self.lang
        self.say(self.style(q.why.get(lang), "green"))
        names = [section_label(s, lang) for s in q.changes]
        if names:
            self.say(f"{t('changes', lang)}: {', '.join(names)}")
        for line in self.what_if(q, parsed, answers):
            self.say(line)

    def what_if(self, q: Question, parsed: ParsedQuestion, answers: dict[str, Any]) -> list[str]:
        """Run the advisor for each concrete choice and show the instance it would pick (time-boxed)."""
        lines, start = [], time.monotonic()
        for choice in q.choices:
            if choice.value is None or time.monotonic() - start > WHAT_IF_SECONDS:
                continue
            fields = apply_answers(parsed, {**answers, q.field: choice.value})
            try:
                rec = self.recommend(fields, self.lang)
            except Exception:  # a what-if is a courtesy; a failing variant is simply not shown
                continue
            inst = getattr(rec, "instance", None)
            shown = f"{inst.instance_type} ({inst.gpu_display} × {inst.gpu_count})" if inst else "—"
            lines.append(f"   {choice.label.get(self.lang)} → {shown}")
        return [f"{t('what_if', self.lang)}:", *lines] if lines else []

    def how_loop(self, rec: Any, hint: str) -> None:
        """After the answer: 'how N' / 'how' until Enter, 'q' or end of input."""
        self.say(self.style(hint, "dim"))
        while True:
            line = self.read("> ")
            if line is None or line.lower() in ("", "q", "quit", "exit", "退出"):
                return
            m = HOW_RE.match(line)
            if m:
                self.say(render_how(rec, self.lang, int(m.group(1)) if m.group(1) else None, self.style))
            else:
                self.say(self.style(hint, "dim"))


class _Done:
    def __repr__(self) -> str:
        return "DONE"


_DONE = _Done()


def summarize_answers(answers: dict[str, Any], lang: str) -> str:
    return ", ".join(f"{k}={fmt_value(v, lang) if v is not None else 'auto'}" for k, v in answers.items())
