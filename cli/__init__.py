"""The `gpu-advisor` command line: argparse commands (main, commands) and the terminal question-and-answer
(ask, session, terminal, textui). An adapter over the library, like gpu_advisor.server."""

from gpu_advisor.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
