"""`gpu-advisor ask QUESTION`: argparse wiring and the exit-code contract.

0: an answer; 2: bad input (the message names the field); 1: unexpected failure (short message, and a
traceback only with --debug)."""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Any, TextIO

from gpu_advisor.ask import api
from gpu_advisor.cli.ask_args import add_ask_parser, configure  # noqa: F401 - add_ask_parser re-exported
from gpu_advisor.ask.parser import detect_lang, parse_question
from gpu_advisor.ask.questions import apply_answers
from gpu_advisor.ask.report import render_json, render_markdown, ui
from gpu_advisor.cli.terminal import render_terminal
from gpu_advisor.cli.session import Session
from gpu_advisor.errors import AdvisorError, WorkloadError

REPORT = ("gpu-advisor ask: unexpected error ({kind}). Please run again with --debug and attach the output "
          "to an issue in the gpu-advisor repository.")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def run_ask(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run one `ask`; returns the exit code. stdin/stdout default to sys.stdin/sys.stdout at call time."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    question = " ".join(args.question) if isinstance(args.question, list) else str(args.question)
    lang = args.lang or detect_lang(question)  # a refused question is refused in its own language
    try:
        parsed = parse_question(question)
        lang = args.lang or parsed.lang
        return _answer(args, parsed, lang, stdin, stdout)
    except WorkloadError as exc:
        field = f" [{exc.field}]" if exc.field else ""
        message = exc.message(lang)
        hint = (f" ({', '.join(exc.suggestions[:5])})" if exc.suggestions
                and not all(x in message for x in exc.suggestions[:5]) else "")
        print(f"gpu-advisor ask{field}: {message}{hint}", file=sys.stderr)
        if getattr(args, "json", False):  # a machine reading --json gets the refusal as JSON too (stdout)
            import json

            stdout.write(json.dumps({"question": question, "lang": lang, "error": {
                "field": exc.field, "message": message, "suggestions": list(exc.suggestions or [])}},
                ensure_ascii=False, indent=2) + "\n")
        return 2
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except Exception as exc:  # the exit-code contract: never a raw traceback unless --debug
        if getattr(args, "debug", False):
            traceback.print_exc(file=sys.stderr)
        elif isinstance(exc, AdvisorError):
            print(f"gpu-advisor ask: {exc.message(lang)}", file=sys.stderr)
        print(REPORT.format(kind=type(exc).__name__), file=sys.stderr)
        return 1


def _answer(args: argparse.Namespace, parsed: Any, lang: str, stdin: TextIO, stdout: TextIO) -> int:
    interactive = not (args.no_input or args.json or args.markdown) and _isatty(stdin)
    color = _isatty(stdout) and not (args.json or args.markdown)

    def recommend(fields: dict[str, Any], lang_: str) -> Any:
        return api.recommend_fields(parsed, fields, lang_)

    session = Session(stdin, stdout, lang, color, recommend)
    refusal = api.unresolved_error(parsed, {**parsed.workload_fields, "lang": lang})
    if refusal is not None:
        if not interactive:
            raise refusal
        parsed = _ask_for_model(session, parsed, refusal, lang)
    if interactive:
        session.say(render_terminal_header(parsed, lang, color))
    answers = session.follow_up(parsed) if interactive else {}
    rec = recommend(apply_answers(parsed, answers), lang)
    if args.json:
        stdout.write(render_json(parsed, rec, lang, answers))
    elif args.markdown:
        stdout.write(render_markdown(parsed, rec, lang))
    else:
        if interactive:
            session.say()
        stdout.write(render_terminal(parsed, rec, lang, color, header=not interactive))
    stdout.flush()
    if interactive:
        session.how_loop(rec, ui("how_hint", lang))
    return 0


def _ask_for_model(session: Session, parsed: Any, refusal: Any, lang: str) -> Any:
    """In a terminal, a model name the knowledge base does not know is asked about, never replaced: pick a known
    model (a letter or a name) or give the parameter count in billions. End of input refuses."""
    name = parsed.workload_fields.get("model")
    close = list(refusal.suggestions)
    session.say(refusal.message(lang))
    for k, option in enumerate(close):
        session.say(f"   {chr(ord('a') + k)}) {option}")
    prompt = ("输入字母或模型名，或参数量（十亿，如 47）：" if lang == "zh"
              else "A letter or a model name, or the parameter count in billions (e.g. 47): ")
    while True:
        line = session.read(prompt)
        if line is None or line == "":
            raise refusal
        fields = dict(parsed.workload_fields)
        if len(line) == 1 and "a" <= line.lower() < chr(ord("a") + len(close)):
            fields["model"] = close[ord(line.lower()) - ord("a")]
        elif _is_number(line):
            fields["params_billion"] = float(line)
        else:
            fields["model"] = line.strip()
        updated = parse_question(parsed.text).model_copy(update={"workload_fields": fields, "unresolved": [
            u for u in parsed.unresolved if u[0] != name or "params_billion" not in fields and fields.get("model") == name]})
        if api.unresolved_error(updated, fields) is None:
            return updated


def _is_number(text: str) -> bool:
    try:
        return 0 < float(text) <= 2000
    except ValueError:
        return False


def render_terminal_header(parsed: Any, lang: str, color: bool) -> str:
    from gpu_advisor.cli.terminal import understood_block
    from gpu_advisor.cli.textui import Style

    return "\n".join(understood_block(parsed, lang, Style(color)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-advisor ask")
    configure(parser)
    args = parser.parse_args(argv)
    return run_ask(args)
