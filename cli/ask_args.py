"""The `ask` command's arguments. argparse only: registering the command on the CLI imports none of the question
parser, the advisor or the renderers (gpu_advisor.cli.ask runs it)."""

from __future__ import annotations

import argparse
from typing import Any


def add_ask_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `ask` on the CLI's subparsers."""
    p = subparsers.add_parser("ask", help="ask a question in Chinese or English (问一个问题，中英文均可)",
                              description="Ask in plain Chinese or English; get follow-up questions and an explained answer.")
    configure(p)
    return p


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("question", nargs="+", help="the question, e.g. 在阿里云上训练语义分割模型需要多大的GPU和内存？")
    p.add_argument("--lang", choices=("zh", "en"), default=None, help="answer language (default: the question's)")
    p.add_argument("--no-input", action="store_true", help="never ask follow-up questions; state assumptions instead")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable output (never prompts)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown for a ticket (never prompts)")
    p.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")


__all__ = ["add_ask_parser", "configure"]
