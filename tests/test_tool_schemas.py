"""server/tools.json: what tools/list publishes is data generated from server/tools.py, and starting the server
reads that data instead of importing the engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpu_advisor.server.registry import published_tools
from gpu_advisor.server.tools import SPECS

ROOT = Path(__file__).resolve().parents[1]
ENGINE_MODULES = ("gpu_advisor.server.tools", "gpu_advisor.answer.recommendation", "gpu_advisor.advisor",
                  "gpu_advisor.workload", "gpu_advisor.memory", "gpu_advisor.costing", "gpu_advisor.rules")


def test_published_tools_match_the_code():
    published = {entry["name"]: entry for entry in published_tools()}
    assert list(published) == list(SPECS)
    for name, spec in SPECS.items():
        expected = spec.published()
        for key in ("title", "description", "input_schema", "output_schema"):
            assert published[name][key] == expected[key], (
                f"server/tools.json, {name}.{key} differs from server/tools.py: run `make tool-schemas`")


def test_generator_check_passes_and_detects_a_stale_file(tmp_path, monkeypatch):
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_tool_schemas.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_tool_schemas
    finally:
        sys.path.remove(str(ROOT / "tools"))
    stale = json.loads(gen_tool_schemas.render())
    stale[0]["description"] = "an older description"
    target = tmp_path / "tools.json"
    target.write_text(json.dumps(stale, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    monkeypatch.setattr(gen_tool_schemas, "TARGET", target)
    monkeypatch.setattr(gen_tool_schemas, "ROOT", tmp_path)
    assert gen_tool_schemas.main(["--check"]) == 1
    assert gen_tool_schemas.main([]) == 0
    assert json.loads(target.read_text(encoding="utf-8")) == json.loads(gen_tool_schemas.render())


def test_starting_the_server_imports_no_engine_module_and_the_first_call_does():
    script = (
        "import asyncio, json, sys\n"
        "from gpu_advisor.server.app import build_server\n"
        "server = build_server()\n"
        f"engine = {ENGINE_MODULES!r}\n"
        "before = [m for m in engine if m in sys.modules]\n"
        "tool = server._tool_manager.get_tool('explain_rule')\n"
        "result = asyncio.run(tool.fn(rule_id='TIER-ENTRY', lang='en'))\n"
        "after = [m for m in engine if m in sys.modules]\n"
        "print(json.dumps({'before': before, 'after': after, 'error': result.is_error,\n"
        "                  'id': result.structured_content['id']}))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == []
    assert "gpu_advisor.server.tools" in seen["after"] and "gpu_advisor.rules" in seen["after"]
    assert seen["error"] is False and seen["id"] == "TIER-ENTRY"
