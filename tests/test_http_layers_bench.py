"""bench/http_layers.py gives each py-spy sample to the right layer (the ratio's breakdown in docs/benchmarks.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import http_layers  # noqa: E402

ROOT = "Server.run (uvicorn/server.py:67);asyncio_run (uvicorn/_compat.py:30);BaseEventLoop._run_once (asyncio/base_events.py:1922)"
THREAD = ("Thread._bootstrap (threading.py:995);WorkerThread.run (anyio/_backends/_asyncio.py:1124);"
          "make_tool.<locals>.call (server/registry.py:332)")
RAW = "\n".join([
    # the tool's own work, on its worker thread: however deep, it is the in-process side
    f"{THREAD};ToolSpec.run (server/registry.py:265);recommend (engine/advisor.py:37);dumps (json/__init__.py:183) 7",
    # the thread hop of our wrapper: anyio frames under make_tool's coroutine
    f"{ROOT};make_tool.<locals>.run (server/registry.py:340);run_sync (anyio/to_thread.py:56) 3",
    # pydantic under the SDK's transport counts for the transport
    f"{ROOT};StreamableHTTPServerTransport._create_json_response (mcp/server/streamable_http.py:400);"
    "model_dump_json (pydantic/main.py:470) 2",
    f"{ROOT};H11Protocol.handle_events (uvicorn/protocols/http/h11_impl.py:200);next_event (h11/_connection.py:450) 4",
    f"{ROOT};Guard.__call__ (server/http.py:120);jsonrpc_problem (server/http.py:190);loads (json/__init__.py:346) 1",
    # the bare loop: only root frames, which name no layer
    f"{ROOT};EpollSelector.select (selectors.py:468) 5",
    "garbage line without a count",
])


def test_samples_go_to_the_innermost_layer_on_their_stack() -> None:
    counts = http_layers.attribute(RAW)
    assert counts == {
        http_layers.TOOL: 7,
        "ours: tool wrapper (thread hop, time limit)": 3,
        "SDK: streamable HTTP transport": 2,
        "uvicorn + h11": 4,
        "ours: HTTP guard (server/http.py)": 1,
        "event loop, threads (no layer on the stack)": 5,
    }
