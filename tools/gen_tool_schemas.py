"""Generate server/tools.json, what the MCP server publishes in tools/list, from the ToolSpecs in server/tools.py.

The server reads the file instead of deriving the schemas at start-up (see server/registry.py published_tools).
`--check` exits 1 when the checked-in file differs from what the code says (CI runs it through a test).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET = ROOT / "server" / "tools.json"


def render() -> str:
    from gpu_advisor.server.tools import SPECS

    return json.dumps([spec.published() for spec in SPECS.values()], ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if server/tools.json is out of date")
    args = parser.parse_args(argv)
    text = render()
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if args.check:
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run `make tool-schemas` "
                  "(python tools/gen_tool_schemas.py) and commit it", file=sys.stderr)
            return 1
        print(f"{TARGET.relative_to(ROOT)} is up to date ({len(json.loads(text))} tools)")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
