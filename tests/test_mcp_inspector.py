"""A real third-party client: the MCP Inspector CLI (Node) against `gpu-advisor serve`.

Skips only where Node / npx are missing, or where the Inspector package cannot be fetched from the npm
registry; the skip reason says which. Every subprocess has a timeout. The version is pinned so that the exit
codes are known (0 success, 5 tool error, 1 protocol error); override it with GPU_ADVISOR_INSPECTOR.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

INSPECTOR = os.environ.get("GPU_ADVISOR_INSPECTOR", "@modelcontextprotocol/inspector@2.12.0")
FETCH_TIMEOUT_S = 300
RUN_TIMEOUT_S = 120


def serve_command() -> list[str]:
    script = Path(sys.executable).parent / "gpu-advisor"
    return [str(script), "serve"] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli", "serve"]


@pytest.fixture(scope="module")
def npx() -> str:
    node, npx = shutil.which("node"), shutil.which("npx")
    if node is None or npx is None:
        pytest.skip("MCP Inspector test needs Node.js and npm: " + ("node" if node is None else "npx") + " is not on PATH")
    try:
        # Fetch (or find in the npx cache) the package without running it: a failure here is the registry's.
        fetched = subprocess.run([npx, "-y", "-p", INSPECTOR, "node", "-e", "0"], capture_output=True, text=True,
                                 timeout=FETCH_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.skip(f"could not fetch {INSPECTOR} from the npm registry within {FETCH_TIMEOUT_S} s")
    if fetched.returncode != 0:
        lines = [ln for ln in fetched.stderr.splitlines() if ln.strip() and "complete log" not in ln]
        last = next((ln for ln in lines if "npm error" in ln), lines[-1] if lines else "no output")
        pytest.skip(f"could not fetch {INSPECTOR} from the npm registry (npx exit {fetched.returncode}): {last}")
    return npx


def inspector(npx: str, target: list[str], *method: str, cwd: Path) -> tuple[int, dict]:
    done = subprocess.run([npx, "-y", INSPECTOR, "--cli", *target, *method], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL, cwd=cwd)
    try:
        # The result is the JSON document printed first on stdout.
        output = json.JSONDecoder().raw_decode(done.stdout.lstrip())[0]
    except ValueError:
        output = {"stdout": done.stdout[-2000:], "stderr": done.stderr[-2000:]}
    return done.returncode, output


def test_inspector_lists_and_calls_over_stdio(npx: str, tmp_path: Path) -> None:
    rc, listed = inspector(npx, serve_command(), "--method", "tools/list", cwd=tmp_path)
    assert rc == 0, listed
    tools = {t["name"]: t for t in listed["tools"]}
    assert {"recommend_gpu_config", "estimate_memory", "ask", "list_instance_types", "explain_rule"} == set(tools)
    assert tools["recommend_gpu_config"]["annotations"]["readOnlyHint"] is True

    rc, called = inspector(npx, serve_command(), "--method", "tools/call", "--tool-name", "recommend_gpu_config",
                           "--tool-arg", "task=semantic_segmentation", "--tool-arg", "input_size=[1024,1024]",
                           "--tool-arg", "batch_size_per_gpu=8", "--tool-arg", "lang=en", cwd=tmp_path)
    assert rc == 0 and not called.get("isError"), called
    Draft202012Validator(tools["recommend_gpu_config"]["outputSchema"]).validate(called["structuredContent"])
    assert called["structuredContent"]["instance_type"] and called["structuredContent"]["reasons"]
    assert "GPU recommendation" in called["content"][0]["text"]
    rc, called = inspector(npx, serve_command(), "--method", "tools/call", "--tool-name", "recommend_gpu_config",
                           "--tool-arg", "task=semantic_segmentation", "--tool-arg", "batch_size_per_gpu=8",
                           "--tool-arg", 'sections=["workload"]', "--tool-arg", "lang=en", cwd=tmp_path)
    assert rc == 0 and not called.get("isError"), called
    assert called["structuredContent"]["workload"]["batch_size_per_gpu"] == 8


def test_inspector_sees_a_tool_error(npx: str, tmp_path: Path) -> None:
    rc, called = inspector(npx, serve_command(), "--method", "tools/call", "--tool-name", "recommend_gpu_config",
                           "--tool-arg", "task=semantic_segmentation", "--tool-arg", "num_gpus=0",
                           "--tool-arg", "lang=zh", cwd=tmp_path)
    assert rc in (5, 0) and called.get("isError") is True, called  # 5 from Inspector 2.x; 0.x exits 0
    assert "num_gpus" in called["content"][0]["text"]


def test_inspector_over_streamable_http(npx: str, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "GPU_ADVISOR_TOKEN"}
    with open(tmp_path / "server.log", "w", encoding="utf-8") as log:
        proc = subprocess.Popen([*serve_command(), "--transport", "http", "--port", str(port)], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.1)
            rc, called = inspector(npx, [f"http://127.0.0.1:{port}/mcp", "--transport", "http"], "--method",
                                   "tools/call", "--tool-name", "explain_rule", "--tool-arg", "rule_id=TIER-ENTRY",
                                   cwd=tmp_path)
            assert rc == 0 and called["structuredContent"]["id"] == "TIER-ENTRY", called
        finally:
            proc.terminate()
            proc.wait(10)
