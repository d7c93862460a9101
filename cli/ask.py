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
        hint = f" ({', '.join(exc.suggestions[:5])})" if exc.suggestions else ""
        print(f"gpu-advisor ask{field}: {exc.message(lang)}{hint}", file=sys.stderr)
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


def render_terminal_header(parsed: Any, lang: str, color: bool) -> str:
    from gpu_advisor.cli.terminal import understood_block
    from gpu_advisor.cli.textui import Style

    return "\n".join(understood_block(parsed, lang, Style(color)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-advisor ask")
    configure(parser)
    args = parser.parse_args(argv)
    return run_ask(args)
