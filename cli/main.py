"""The `gpu-advisor` command: a thin adapter over the library.

Exit codes: 0 answer, 2 bad input (message names the field), 1 unexpected failure (short message; the
traceback only with --debug). Imports are deferred so `gpu-advisor --version` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, TextIO

from gpu_advisor import __version__

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2
REPORT_HINT = {"en": "This is a bug in gpu-advisor; please report it with the command you ran (add --debug for details).",
               "zh": "这是 gpu-advisor 的缺陷，请附上所运行的命令报告（加 --debug 查看详情）。"}


def _workload_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per Workload field, with the field's description as help (the model is the contract)."""
    from gpu_advisor.workload import Workload

    group = parser.add_argument_group("workload fields (see README)")
    for name, info in Workload.model_fields.items():
        if name == "lang":
            continue
        flag = "--" + name.replace("_", "-")
        if name == "input_size":
            group.add_argument(flag, dest=name, nargs=2, type=int, metavar=("H", "W"), help=info.description)
        elif info.annotation is not None and "bool" in str(info.annotation):
            group.add_argument(flag, dest=name, choices=["true", "false"], help=info.description)
        elif info.annotation is not None and "tuple" in str(info.annotation):  # a list of names: comma-separated
            group.add_argument(flag, dest=name, metavar="A,B,...", type=_names, help=info.description)
        else:
            group.add_argument(flag, dest=name, help=info.description)
    parser.add_argument("--workload", metavar="FILE", help="YAML or JSON workload file ('-' for stdin)")


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=["zh", "en"], help="answer language (default: the workload's, else zh)")
    parser.add_argument("--catalog-override", metavar="FILE",
                        help="YAML with current prices / instance types (each with source and as_of) read on top of "
                             "the shipped catalog; same as GPU_ADVISOR_CATALOG_OVERRIDE")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of unexpected failures")


def _read_file(path: str, stdin: TextIO) -> dict[str, Any]:
    """The workload file (``-``: stdin): bounded, UTF-8, strict YAML/JSON (gpu_advisor.util.userdata)."""
    from gpu_advisor.util import userdata
    from gpu_advisor.errors import WorkloadError

    try:
        text = userdata.read_text(path, "--workload", userdata.MAX_WORKLOAD_BYTES, stdin)
        data = userdata.load(text, "stdin" if path == "-" else path) if text.strip() else {}
    except userdata.InputError as exc:
        en, zh = (exc.en, exc.zh) if exc.en.startswith("--workload") else (f"--workload: {exc.en}", f"--workload：{exc.zh}")
        raise WorkloadError(en, zh, field=exc.field or "workload") from None
    if not isinstance(data, dict):
        raise WorkloadError("--workload: the file must hold a mapping of workload fields",
                            "--workload：文件内容必须是字段映射", field="workload")
    return data


def workload_dict(args: argparse.Namespace, stdin: TextIO) -> dict[str, Any]:
    from gpu_advisor.workload import Workload

    data = _read_file(args.workload, stdin) if getattr(args, "workload", None) else {}
    for name in Workload.model_fields:
        value = getattr(args, name, None)
        if value is not None:
            data[name] = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
    if getattr(args, "lang", None):
        data["lang"] = args.lang
    return data


def _lang(args: argparse.Namespace, data: dict[str, Any] | None = None) -> str:
    lang = getattr(args, "lang", None) or (data or {}).get("lang")
    return lang if lang in ("zh", "en") else "zh"


def cmd_recommend(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from gpu_advisor.advisor import recommend
    from gpu_advisor.validation import workload_from_dict

    data = workload_dict(args, stdin)
    workload = workload_from_dict(data)
    lang = _lang(args, data)
    knowledge = None
    if args.catalog_override:
        from gpu_advisor.advisor import get_knowledge

        knowledge = get_knowledge(override=args.catalog_override)
    rec = recommend(workload, lang, knowledge=knowledge)
    if args.json:
        stdout.write(json.dumps(rec.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n")
    else:
        stdout.write(rec.render(lang))
    return EXIT_OK


def cmd_estimate(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from gpu_advisor.memory import estimate_dict

    lang = _lang(args)
    if args.jsonl:
        return _estimate_jsonl(args.jsonl, lang, stdin, stdout)
    result = estimate_dict(workload_dict(args, stdin), lang)
    stdout.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    return EXIT_BAD_INPUT if "error" in result else EXIT_OK


def _estimate_jsonl(path: str, lang: str, stdin: TextIO, stdout: TextIO) -> int:
    """`estimate --jsonl`: line by line, each line bounded and failing alone; a file that cannot be opened is exit 2."""
    from gpu_advisor.util import userdata
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.memory.api import estimate_numbered_lines

    name = "stdin" if path == "-" else path
    try:
        stream = stdin if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise WorkloadError(f"--jsonl: cannot read {name}: {reason}", f"--jsonl：无法读取 {name}：{reason}",
                            field="jsonl") from None
    try:
        for line in estimate_numbered_lines(userdata.lines(stream, "--jsonl", name), lang):
            stdout.write(line + "\n")
    except OSError as exc:  # a directory opens but cannot be read
        reason = exc.strerror or type(exc).__name__
        raise WorkloadError(f"--jsonl: cannot read {name}: {reason}", f"--jsonl：无法读取 {name}：{reason}",
                            field="jsonl") from None
    finally:
        if stream is not stdin:
            stream.close()
    return EXIT_OK


def _add_commands(sub: Any, command: str | None = None) -> dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]:
    """The subcommands; ``command`` (the one on the command line, when known) limits the Workload flags, which
    import the Workload model, to the command that uses them (``gpu-advisor serve`` starts without it)."""
    rec = sub.add_parser("recommend", help="recommend an instance configuration for a workload")
    if command in (None, "recommend"):
        _workload_flags(rec)
    _common(rec)
    rec.add_argument("--json", action="store_true", help="machine-readable JSON instead of Markdown")
    est = sub.add_parser("estimate", help="GPU memory estimate with breakdown (JSON)")
    if command in (None, "estimate"):
        _workload_flags(est)
    _common(est)
    est.add_argument("--jsonl", metavar="FILE", help="many workloads, one JSON object per line ('-' for stdin)")
    handlers = {"recommend": cmd_recommend, "estimate": cmd_estimate}
    for module in ("gpu_advisor.cli.commands",):
        try:
            extra = __import__(module, fromlist=["add_commands"])
        except ImportError:
            continue
        handlers.update(extra.add_commands(sub))
    return handlers


def build_parser(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, dict[str, Callable[..., int]]]:
    """The parser and the handler of each command; given ``argv``, a parser for that command line only (the other
    commands are there, without their Workload flags)."""
    parser = argparse.ArgumentParser(prog="gpu-advisor", description="Explained GPU server recommendations for Alibaba Cloud.")
    parser.add_argument("--version", action="version", version=f"gpu-advisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = None if argv is None else next((a for a in argv if not a.startswith("-")), None)
    return parser, _add_commands(sub, command)


def _fail(exc: BaseException, lang: str, stderr: TextIO) -> int:
    from gpu_advisor.errors import AdvisorError, KnowledgeError
    from gpu_advisor.util.textsafe import clean

    if isinstance(exc, KnowledgeError):
        stderr.write(f"gpu-advisor: {clean(exc.message(lang), 2000)}\n")
        return EXIT_BAD_INPUT if getattr(exc, "user_input", False) else EXIT_FAILURE
    if isinstance(exc, AdvisorError):
        stderr.write(f"gpu-advisor: {clean(exc.message(lang), 2000)}\n")
        if exc.suggestions:
            label = "你是不是指" if lang == "zh" else "did you mean"
            stderr.write(f"  {label}: {clean(', '.join(exc.suggestions), 400)}\n")
        return EXIT_BAD_INPUT if exc.code in ("invalid_workload", "unknown_model") else EXIT_FAILURE
    stderr.write(f"gpu-advisor: {type(exc).__name__}: {clean(str(exc), 400)}\n{REPORT_HINT[lang]}\n")
    return EXIT_FAILURE


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # fast path: no parser, no pydantic import
        stdout.write(f"gpu-advisor {__version__}\n")
        return EXIT_OK
    parser, handlers = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    if args.command is None:
        parser.print_help(stdout)
        return EXIT_BAD_INPUT
    lang = _lang(args)
    try:
        return handlers[args.command](args, stdin, stdout)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        return EXIT_OK
    except Exception as exc:  # every failure becomes a message; tracebacks only with --debug
        if getattr(args, "debug", False):
            raise
        return _fail(exc, lang, stderr)

