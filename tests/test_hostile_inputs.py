"""Hostile and malformed input through every adapter, driven by one table (tests/hostile_inputs.yaml).

Library: a WorkloadError naming the field. CLI: exit 2 and the message on stderr. MCP tools (in-process
client): an is_error result. HTTP server (`gpu-advisor serve --transport http` on 127.0.0.1): a 4xx, or - for
input that is well-formed JSON-RPC - a 200 whose JSON-RPC result is a tool error (MCP reports bad tool
arguments that way, not with an HTTP status). Never a traceback, never a 5xx.

Every message is in the requested language, names the field, is short (a 1 MB value is not echoed back),
shows user text escaped (no raw control characters) and never evaluates it (templates stay templates).
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_advisor import recommend
from gpu_advisor.errors import WorkloadError
from gpu_advisor.server.http import MAX_BODY_BYTES

from stdio_child import Child

TABLE = Path(__file__).with_name("hostile_inputs.yaml")
CJK = re.compile(r"[\u4e00-\u9fff]")
# what must never reach an output raw: C0 controls but newline, DEL, C1, bidi controls, zero-width, separators, BOM
HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
MAX_SECONDS = 2.0  # per call (issue 21)
MAX_MESSAGE = 4000
LANGS = ("en", "zh")


def _expand(node: Any) -> Any:
    if isinstance(node, dict):
        if set(node) == {"$repeat"}:
            text, count = node["$repeat"]
            return text * count
        if set(node) == {"$nest"}:
            value: Any = "x"
            for _ in range(node["$nest"]):
                value = [value]
            return value
        if set(node) == {"$int"}:
            base, exp = node["$int"].split("**")
            return int(base) ** int(exp)
        return {k: _expand(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_expand(v) for v in node]
    return node


RAW = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
ROWS = [{**row, "input": _expand(row["input"])} for row in RAW["rows"]]
IDS = [row["id"] for row in ROWS]


def test_table_is_big_and_unique() -> None:
    assert len(ROWS) >= 40 and len(set(IDS)) == len(IDS)


def _strings(node: Any) -> str:
    """Every string in a value, keys included (iterative: values nest hundreds of levels deep)."""
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed([x for kv in item.items() for x in kv]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return "".join(out)


def _payload(row: dict[str, Any], lang: str) -> dict[str, Any]:
    return {**row["input"], "lang": row.get("lang", lang)}


def _expected_lang(row: dict[str, Any], lang: str) -> str:
    """The language the message must be in: the requested one, zh (the default) when it is not zh/en."""
    asked = row.get("lang", lang)
    return asked if asked in LANGS else "zh"


def check_message(row: dict[str, Any], lang: str, text: str, where: str) -> None:
    assert row["field"] in text, f"{where}: field {row['field']!r} not named in {text[:300]!r}"
    assert len(text) < MAX_MESSAGE, f"{where}: {len(text)} characters (user value echoed in full?)"
    assert "Traceback" not in text and "File \"" not in text, f"{where}: traceback in {text[:300]!r}"
    # escaped: no raw control characters (terminal escapes, NUL, CR) or bidi overrides
    bad = HIDDEN.findall(text)
    assert not bad, f"{where}: raw control characters {bad!r} in {text[:300]!r}"
    # never evaluated: template syntax is shown, not rendered
    user = _strings(row["input"])
    if "{{ 7*7 }}" in user:
        assert "49" not in text and "7*7" in text, f"{where}: {text!r}"
    if "{% for" in user:
        assert "012345678" not in text, f"{where}: {text!r}"
    if "__class__" in user:
        assert "<class" not in text and "mro" not in text.replace("__mro__", ""), f"{where}: {text!r}"
    # in the requested language (Chinese text in zh; none in en apart from the user's own characters)
    user_chars = set(user)
    own = "".join(c for c in text if c not in user_chars)
    if _expected_lang(row, lang) == "zh":
        assert CJK.search(own), f"{where}: zh requested, message has no Chinese: {text[:300]!r}"
    else:
        assert not CJK.search(own), f"{where}: en requested, message has Chinese: {text[:300]!r}"


# ------------------------------------------------------------------------------------------------ library
@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_library(row: dict[str, Any]) -> None:
    for lang in LANGS:
        start = time.perf_counter()
        with pytest.raises(WorkloadError) as info:
            recommend(_payload(row, lang), lang=None)
        assert time.perf_counter() - start < MAX_SECONDS, f"library/{lang}: {time.perf_counter() - start:.2f} s"
        err = info.value
        assert err.field in (row["field"], None), (err.field, err.en[:200])
        if err.field is None:  # a cross-field check: the message names the field instead
            assert row["id"] == "lora-rank-with-full"
        check_message(row, lang, err.message(_expected_lang(row, lang)), f"library/{lang}")


# ------------------------------------------------------------------------------------------------ CLI
def _cli(argv: list[str], stdin_text: str) -> tuple[int, str, str]:
    from gpu_advisor.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


BIG = 64 * 1024  # PyYAML reads a 1 MB workload file in ~2 s: the CLI runs the megabyte rows once, not four times


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_cli(row: dict[str, Any]) -> None:
    runs = [("recommend", "en"), ("estimate", "en"), ("recommend", "zh"), ("estimate", "zh")]
    if len(_strings(row["input"])) > BIG:
        runs = [runs[IDS.index(row["id"]) % 4]]
    for command, lang in runs:
        text = yaml.safe_dump(_payload(row, lang), allow_unicode=True)
        flags = ["--lang", lang] if "lang" not in row else []
        start = time.perf_counter()
        code, out, err = _cli([command, "--workload", "-", *flags], text)
        assert time.perf_counter() - start < MAX_SECONDS, f"cli {command}/{lang}: {time.perf_counter() - start:.2f} s"
        assert code == 2, (command, code, err[:300])
        if command == "recommend":
            assert out == ""
            check_message(row, lang, err.removeprefix("gpu-advisor: "), f"cli recommend/{lang}")
        else:
            message = json.loads(out)["error"]["message"] if out else err
            check_message(row, lang, message, f"cli estimate/{lang}")


def test_cli_subprocess_exit_code_for_a_1mb_name() -> None:
    """The real console script: stdin of 1 MB, exit 2, one short line on stderr."""
    script = Path(sys.executable).parent / "gpu-advisor"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    row = next(r for r in ROWS if r["id"] == "model-1mb")
    done = subprocess.run([*command, "recommend", "--workload", "-", "--lang", "en"], input=json.dumps(row["input"]),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    check_message(row, "en", done.stderr, "cli subprocess")


# ------------------------------------------------------------------------------------------------ MCP tools
@pytest.fixture(scope="module")
def mcp_server():
    import logging

    from gpu_advisor.server.app import build_server

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield build_server()
    root.handlers[:] = handlers
    root.setLevel(level)


def _json_safe(node: Any) -> bool:
    """False when the value holds NaN or infinity, which JSON cannot carry (clients send null instead)."""
    if isinstance(node, float):
        return node == node and node not in (float("inf"), float("-inf"))
    if isinstance(node, dict):
        return all(_json_safe(v) for v in node.values())
    if isinstance(node, list):
        return all(_json_safe(v) for v in node)
    return True


def _depth(node: Any) -> int:
    depth, level = 0, [node]
    while level:
        depth += 1
        level = [v for n in level for v in (n.values() if isinstance(n, dict) else n if isinstance(n, list) else ())]
    return depth


def test_mcp_tools(mcp_server) -> None:
    import anyio
    from mcp import Client

    failures: list[str] = []

    async def go() -> None:
        async with Client(mcp_server) as client:
            # NaN rows: see test_http_server; rows nested deeper than the SDK client serialises (pydantic's maximum
            # serialization depth, in the client's send_request) go as raw JSON in test_http_server only
            for row in filter(lambda r: _json_safe(r["input"]) and _depth(r["input"]) < 240, ROWS):
                for lang in LANGS:
                    for tool in ("recommend_gpu_config", "estimate_memory"):
                        start = time.perf_counter()
                        result = await client.call_tool(tool, _payload(row, lang))
                        seconds = time.perf_counter() - start
                        text = result.content[0].text if result.content else ""
                        try:
                            assert seconds < MAX_SECONDS, f"{tool}: {seconds:.2f} s"
                            assert result.is_error, f"{tool} answered instead of refusing"
                            check_message(row, lang, text, f"mcp {tool}/{lang}")
                        except AssertionError as exc:
                            failures.append(f"{row['id']}: {exc}")

    anyio.run(go)
    assert not failures, "\n".join(failures[:20])


# ------------------------------------------------------------------------------------------------ HTTP
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory):
    script = Path(sys.executable).parent / "gpu-advisor"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPU_ADVISOR_ALLOWED", "GPU_ADVISOR_TOKEN"))}
    log = open(tmp_path_factory.mktemp("hostile") / "http.log", "w+", encoding="utf-8")
    proc = subprocess.Popen([*command, "serve", "--transport", "http", "--port", str(port)], env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "HTTP server did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
        log.seek(0)
        assert "Traceback" not in log.read()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def _post(url: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError) as exc:
        # A body over the limit: the server answers 413 and closes while the client is still sending.
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ConnectionError) and len(body) > MAX_BODY_BYTES:
            return 413, "connection closed by the server after refusing the body"
        raise


def _call(name: str, arguments: Any, rid: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


def test_http_server(http_url: str) -> None:
    failures: list[str] = []
    for row in ROWS:
        for lang in LANGS:
            start = time.perf_counter()
            status, body = _post(http_url, _call("recommend_gpu_config", _payload(row, lang)))
            where = f"{row['id']} http/{lang}"
            if time.perf_counter() - start >= MAX_SECONDS:
                failures.append(f"{where}: {time.perf_counter() - start:.2f} s")
            if 400 <= status < 500:
                continue  # refused by the transport (e.g. 413 for a 1 MB body, 400 for NaN in JSON)
            try:
                assert status == 200, f"{where}: HTTP {status} {body[:200]}"
                result = json.loads(body)["result"]
                assert result["isError"], f"{where}: answered"
                check_message(row, lang, result["content"][0]["text"], where)
            except (AssertionError, KeyError, ValueError) as exc:
                failures.append(str(exc))
    assert not failures, "\n".join(failures[:20])
    assert _post(http_url, _call("explain_rule", {"rule_id": "TIER-ENTRY"}))[0] == 200  # still serving


# Malformed requests that never reach a tool: the transport answers 4xx (or a JSON-RPC error), never 5xx.
BODIES: dict[str, bytes] = {
    "not-json": b"{this is not json",
    "empty": b"",
    "not-utf8": b"\xff\xfe\x00{\"jsonrpc\": \"2.0\"}",
    "json-array-of-junk": b"[1, 2, 3]",
    "json-string": b"\"hello\"",
    "deep-nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep-nesting-in-arguments": _call("recommend_gpu_config", {"task": "semantic_segmentation"}).replace(
        b'"semantic_segmentation"', b"[" * 50_000 + b"]" * 50_000),
    "arguments-a-list": _call("recommend_gpu_config", [1, 2, 3]),
    "arguments-a-string": _call("recommend_gpu_config", "task=semantic_segmentation"),
    "unknown-tool": _call("rm_rf", {}),
    "unknown-method": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "shell/exec"}).encode(),
    "nan-in-arguments": _call("recommend_gpu_config", {"task": "llm_finetune", "params_billion": float("nan")}),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_http_malformed_requests(http_url: str, name: str) -> None:
    status, body = _post(http_url, BODIES[name])
    assert status < 500, f"{name}: HTTP {status} {body[:300]}"
    if status == 200:
        data = json.loads(body)
        assert "error" in data or data.get("result", {}).get("isError"), f"{name}: {body[:300]}"
    assert "Traceback" not in body
    assert _post(http_url, _call("explain_rule", {"rule_id": "TIER-ENTRY"}))[0] == 200  # still serving


def stdio_lines() -> list[bytes]:
    """The handshake, every body of BODIES, then a well-formed call (id 999) whose answer ends the exchange."""
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    return [json.dumps(init).encode(), b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
            *BODIES.values(), _call("explain_rule", {"rule_id": "TIER-ENTRY", "lang": "en"}, rid=999)]


def check_stdio_replies(child: Child, timeout: float = 120, read_late: bool = False) -> None:
    """Every line of stdio_lines() sent at once (``read_late``: the replies read once the server has gone idle, all
    of them written); each reply a JSON-RPC error or a tool error, the last call answered, exit 0 and no traceback.
    A late answer fails with the child's thread stacks (tests/stdio_child.py)."""
    child.send(stdio_lines())
    if read_late:
        child.wait_idle(timeout=timeout / 2)
    if not child.replies_until(999, timeout):
        pytest.fail(f"no answer to the well-formed call within {timeout:g} s; {child.stacks()}")
    code = child.close()
    assert code == 0, f"exit status {code}; stderr: {child.stderr()[-2000:]}"
    by_id = {r.get("id"): r for r in child.replies}
    assert by_id["init"]["result"]["serverInfo"]["name"] == "gpu-advisor"
    assert by_id[999]["result"]["structuredContent"]["id"] == "TIER-ENTRY"
    for reply in child.replies:
        if reply.get("id") not in ("init", 999):
            assert "error" in reply or reply["result"].get("isError"), str(reply)[:300]
    assert "Traceback" not in child.stderr(), child.stderr()[-2000:]


def test_stdio_malformed_messages(tmp_path: Path) -> None:
    """The same bodies as lines to `gpu-advisor serve` over stdio, after the handshake: the server never exits or
    writes a traceback; each reply is a JSON-RPC error or a tool error (the SDK drops a line it cannot parse without
    a reply), and a well-formed call sent after all of them is answered."""
    child = Child(cwd=tmp_path)
    try:
        check_stdio_replies(child)
    finally:
        child.kill()


# ------------------------------------------------------------------------------------------------ workload files
FILES = RAW["files"]


def _file_bytes(row: dict[str, Any]) -> bytes:
    raw = row["latin1"].encode("latin-1") if "latin1" in row else row["text"].encode("utf-8")
    if "pad" in row:
        text, count = row["pad"]
        raw += text.encode("utf-8") * count
    return raw


@pytest.mark.parametrize("row", FILES, ids=[r["id"] for r in FILES])
def test_cli_workload_files(row: dict[str, Any], tmp_path: Path) -> None:
    """Each file through `--workload FILE` and `--workload -` (stdin as bytes): exit 2 within 2 s, the message in
    the requested language naming the field or place, escaped and short."""
    from gpu_advisor.cli import main

    path = tmp_path / "w.yaml"
    path.write_bytes(_file_bytes(row))
    for command, lang, source in [("recommend", "en", "file"), ("estimate", "zh", "stdin"), ("recommend", "zh", "stdin"),
                                  ("estimate", "en", "file")]:
        out, err = io.StringIO(), io.StringIO()
        stdin = io.TextIOWrapper(io.BytesIO(_file_bytes(row)), encoding="utf-8")
        start = time.perf_counter()
        code = main([command, "--workload", str(path) if source == "file" else "-", "--lang", lang], stdin=stdin,
                    stdout=out, stderr=err)
        seconds = time.perf_counter() - start
        where = f"{row['id']} {command}/{lang}/{source}"
        assert code == 2, (where, code, err.getvalue()[:300])
        assert seconds < MAX_SECONDS, f"{where}: {seconds:.2f} s"
        assert "bug" not in err.getvalue() and "缺陷" not in err.getvalue(), where
        # estimate reports a workload that parsed but is invalid as a JSON error object on stdout
        message = json.loads(out.getvalue())["error"]["message"] if out.getvalue() else err.getvalue()
        assert command == "estimate" or out.getvalue() == "", where
        field = row["field"][lang] if isinstance(row["field"], dict) else row["field"]
        check_message({"field": field, "input": {}}, lang, message.removeprefix("gpu-advisor: "), where)


JSONL_LINES: list[bytes] = [
    json.dumps({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora"}).encode(),
    b'{"task": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",                      # RecursionError in json
    b'{"task": "llm_finetune", "num_gpus": ' + b"9" * 5000 + b"}",                # more digits than int() reads
    b'{"task": "llm_finetune", "num_gpus": ' + b"9" * 400 + b"}",                 # OverflowError as a float
    b'{"task": "llm_finetune", "params_billion": 1e-05}',                         # the C core's crash class
    b'{"task": "llm_finetune", "params_billion": Infinity}',
    b'{"task": "\xff\xfe"}',                                                      # not UTF-8
    b'{"model": "' + b"x" * (2 * 1024 * 1024) + b'"}',                            # over the line cap
    b"[1, 2, 3]",
    b'{"task": "semantic_segmentation", "batch_size_per_gpu": -1}',
    json.dumps({"task": "semantic_segmentation"}).encode(),
]


def test_jsonl_each_line_fails_alone(tmp_path: Path) -> None:
    from gpu_advisor.cli import main

    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"\n".join(JSONL_LINES) + b"\n")
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = main(["estimate", "--jsonl", str(path), "--lang", "en"], stdout=out, stderr=err)
    assert time.perf_counter() - start < MAX_SECONDS * 2
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0 and len(results) == len(JSONL_LINES), (code, err.getvalue()[:300])
    assert "memory" in results[0] and "memory" in results[-1]
    for number, result in enumerate(results[1:-1], start=2):
        assert "error" in result, (number, str(result)[:200])
        assert result["error"]["line"] == number and f"line {number}" in result["error"]["message"]
        assert len(result["error"]["message"]) < 400 and not HIDDEN.search(result["error"]["message"])
    assert results[9]["error"]["field"] == "batch_size_per_gpu" and results[4]["error"]["field"] == "params_billion"


@pytest.mark.parametrize("target", ["/nonexistent/batch.jsonl", "DIR", "/dev/zero"])
def test_jsonl_unreadable_or_endless_input_is_an_input_error(target: str, tmp_path: Path) -> None:
    from gpu_advisor.cli import main

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = main(["estimate", "--jsonl", str(tmp_path) if target == "DIR" else target, "--lang", "en"],
                stdout=out, stderr=err)
    assert time.perf_counter() - start < MAX_SECONDS
    if target == "/dev/zero":  # one error line for the endless line, then reading stops
        assert code == 0 and "limit" in out.getvalue() and "stopped reading" in out.getvalue()
    else:
        assert code == 2 and "cannot read" in err.getvalue() and "bug" not in err.getvalue()


def test_workload_from_dev_zero_stops_at_the_cap() -> None:
    code, out, err = _cli(["recommend", "--workload", "/dev/zero", "--lang", "en"], "")
    assert code == 2 and "larger than the limit" in err


@pytest.mark.parametrize("flags", [
    ["--params-billion", "0.00001"], ["--params-billion", "9e-05"], ["--params-billion", "1e-300"],
    ["--dataset-size-gb", "0.00001"], ["--expected-months-of-use", "0.00001"], ["--params-billion", "1e16"],
])
def test_the_crash_class_through_the_real_cli_is_exit_2_not_a_signal(flags: list[str]) -> None:
    """In a subprocess: these values made durable-rules' C core segfault (exit 139) before issue 21."""
    script = Path(sys.executable).parent / "gpu-advisor"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    done = subprocess.run([*command, "recommend", "--task", "llm_finetune", *flags, "--lang", "en"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert flags[0].lstrip("-").replace("-", "_") in done.stderr and "Traceback" not in done.stderr


def test_smallest_valid_values_are_answered_in_a_subprocess() -> None:
    """At the new minimums the job's derived numbers are tiny (hours, GiB): they reach the C core encoded, and the
    answer comes back (exit 0), not a signal."""
    script = Path(sys.executable).parent / "gpu-advisor"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli"]
    done = subprocess.run([*command, "recommend", "--task", "llm_finetune", "--params-billion", "0.001",
                           "--dataset-size-gb", "0.001", "--expected-months-of-use", "0.01", "--epochs", "0.001",
                           "--deadline-hours", "0.01", "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert json.loads(done.stdout)["workload"]["params_billion"] == 0.001
