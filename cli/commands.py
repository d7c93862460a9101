"""More `gpu-advisor` commands: ask, catalog, rules, explain, serve. Each is a few lines over the library."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable, TextIO

Handler = Callable[[argparse.Namespace, TextIO, TextIO], int]


def cmd_catalog(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    if getattr(args, "catalog_action", None) == "refresh":
        from gpu_advisor.kb.refresh import run_refresh

        return run_refresh(args, stdout)
    from gpu_advisor.kb.listing import catalog_rows

    rows = catalog_rows(args.gpu, args.min_gpu_memory, {"yes": True, "no": False}.get(args.rdma or ""), args.region)
    if args.json:
        stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return 0
    stdout.write(f"{'instance_type':<28} {'vCPU':>5} {'GiB':>7} {'GPUs':>5}  {'GPU':<44} {'GB/GPU':>6}  {'RDMA':<6} {'status':<16} as_of\n")
    for r in rows:
        count = "-" if r["gpu_count"] is None else f"{r['gpu_count']:g}"
        mem = "-" if r["gpu_memory_gib"] is None else f"{r['gpu_memory_gib']:g}"
        stdout.write(f"{r['instance_type']:<28} {r['vcpu']:>5} {r['memory_gib']:>7g} {count:>5}  {r['gpu_model'][:44]:<44} "
                     f"{mem:>6}  {r['rdma']:<6} {r['status']:<16} {r['as_of'] or '-'}\n")
    stdout.write(f"{len(rows)} instance types\n")
    return 0


def cmd_rules(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from gpu_advisor.advisor import get_knowledge

    lang = args.lang or "zh"
    for rule in get_knowledge().rules.active:
        stdout.write(f"{rule.id:<22} {rule.title.get(lang)}\n")
    return 0


def cmd_explain(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from gpu_advisor.advisor import get_knowledge
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.kb.listing import rule_summary

    lang = args.lang or "zh"
    rules = get_knowledge().rules
    rule = rules.by_id(args.rule_id.upper())
    if rule is None:
        import difflib

        close = difflib.get_close_matches(args.rule_id.upper(), [r.id for r in rules.rules], n=5, cutoff=0.4)
        raise WorkloadError(f"rule_id: no rule '{args.rule_id}'", f"rule_id：没有规则“{args.rule_id}”",
                            field="rule_id", suggestions=close)
    stdout.write(json.dumps(rule_summary(rule, lang), ensure_ascii=False, indent=2) + "\n")
    return 0


def cmd_serve(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import os

    from gpu_advisor.server.app import serve

    if os.environ.get("GPU_ADVISOR_CATALOG_OVERRIDE"):  # kb.catalog.OVERRIDE_ENV, read here so that a server without
        # one starts without importing the catalog's models (about 0.1 s of `initialize`, bench/cold_start.py)
        from gpu_advisor.kb.catalog_loader import check_override

        check_override()  # a broken override stops the server before it starts (file and key named)

    return serve(transport=args.transport, host=args.host, port=args.port, workers=args.workers)


def _run_ask(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from gpu_advisor.cli.ask import run_ask

    return run_ask(args, stdin=stdin, stdout=stdout)


def add_refresh_parser(catalog_subparsers: Any) -> argparse.ArgumentParser:
    """`catalog refresh`'s arguments (gpu_advisor.kb.refresh runs it; registering them imports none of it)."""
    p = catalog_subparsers.add_parser(
        "refresh", help="update instance types, prices and spot history from Alibaba Cloud's API (needs [aliyun]); "
                   "--public: prices from the public price list, no credentials")
    p.add_argument("--region", default="cn-hangzhou", help="region id, e.g. cn-hangzhou (default)")
    p.add_argument("--output", type=Path, default=None,
                   help="override file to write (default: $GPU_ADVISOR_CATALOG_OVERRIDE or ~/.config/gpu-advisor/catalog-override.yaml)")
    p.add_argument("--spot-days", type=int, default=7, help="days of spot price history to summarise (default 7)")
    p.add_argument("--public", action="store_true",
                   help="prices from Alibaba's public international price list (USD, no credentials) instead of the API")
    p.add_argument("--price-url", default=None,
                   help="with --public: the price list to read (http(s):// or file://; default: Alibaba's CDN file)")
    return p


def _gib(text: str) -> float:
    """--min-gpu-memory: a finite number of GB from 0 to 10,000 (argparse reports the error: exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of GB, got {text[:40]!r}") from None
    if not 0 <= value <= 10_000:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be between 0 and 10000 GB, got {text[:40]!r}")
    return value


def add_commands(sub: Any) -> dict[str, Handler]:
    handlers: dict[str, Handler] = {}
    from gpu_advisor.cli.ask_args import add_ask_parser

    add_ask_parser(sub)
    handlers["ask"] = _run_ask
    cat = sub.add_parser("catalog", help="list GPU instance types from the dated catalog")
    cat.add_argument("--gpu", help="GPU id or name, e.g. A10, L20")
    cat.add_argument("--min-gpu-memory", type=_gib, help="minimum GB per GPU")
    cat.add_argument("--rdma", choices=["yes", "no"])
    cat.add_argument("--region", help="only types with a price in this region")
    cat.add_argument("--json", action="store_true")
    cat.add_argument("--debug", action="store_true")
    add_refresh_parser(cat.add_subparsers(dest="catalog_action", metavar="ACTION"))
    rules = sub.add_parser("rules", help="list the rules")
    rules.add_argument("--lang", choices=["zh", "en"])
    rules.add_argument("--debug", action="store_true")
    exp = sub.add_parser("explain", help="show one rule: text, conditions and sources")
    exp.add_argument("rule_id")
    exp.add_argument("--lang", choices=["zh", "en"])
    exp.add_argument("--debug", action="store_true")
    srv = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    srv.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8000)
    srv.add_argument("--workers", type=int, default=None,
                     help="http: worker processes sharing the port (default 1, or GPU_ADVISOR_HTTP_WORKERS)")
    srv.add_argument("--debug", action="store_true")
    handlers.update({"catalog": cmd_catalog, "rules": cmd_rules, "explain": cmd_explain, "serve": cmd_serve})
    return handlers
