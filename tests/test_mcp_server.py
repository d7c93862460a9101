"""The MCP server in-process, through the SDK's own Client: tools, schemas, errors, resources, prompts."""

import json
import re
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.server.app import build_server
from one_language import one_language

pytestmark = pytest.mark.anyio

TOOLS = {"recommend_gpu_config", "estimate_memory", "ask", "list_instance_types", "explain_rule"}
CJK = re.compile(r"[\u4e00-\u9fff]")
SEMSEG = {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024], "lang": "en"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server():
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield build_server()  # MCPServer() calls logging.basicConfig: give the root logger back as it was
    root.handlers[:] = handlers
    root.setLevel(level)


async def _session(server, fn):
    from mcp import Client

    async with Client(server) as client:
        return await fn(client)


async def _call(server, name: str, args: dict):
    async def go(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools[name], await client.call_tool(name, args)

    return await _session(server, go)


def _ok(tool, result) -> dict:
    assert not result.is_error, result.content[0].text
    Draft202012Validator(tool.output_schema).validate(result.structured_content)
    assert result.content[0].type == "text" and result.content[0].text.strip()
    return result.structured_content


async def test_lists_five_read_only_tools_with_schemas(server) -> None:
    tools = await _session(server, lambda c: c.list_tools())
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == TOOLS
    for tool in by_name.values():
        assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint
        assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object"
        assert "$ref" not in json.dumps(tool.input_schema), f"{tool.name}: inline input schema"
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        # No tool takes a path, a command or a URL: the server never touches files or a shell.
        assert not {"path", "file", "command", "url"} & set(tool.input_schema["properties"])
    schema = by_name["recommend_gpu_config"].input_schema
    from gpu_advisor.workload import Workload

    assert set(schema["properties"]) == set(Workload.model_fields) | {"detail", "sections"}
    assert schema["required"] == ["task"]
    assert "semantic_segmentation" in schema["properties"]["task"]["enum"]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_recommend_brief_by_default_and_full_on_request(server, lang: str) -> None:
    from gpu_advisor import recommend
    from gpu_advisor.answer.brief import brief, brief_text

    tool, result = await _call(server, "recommend_gpu_config", {**SEMSEG, "lang": lang})
    data = _ok(tool, result)
    rec = recommend({**SEMSEG, "lang": lang}, lang=lang)
    # the default answer is the decision (gpu_advisor.answer.brief), read from the same Recommendation
    assert data == brief(rec, lang) and result.content[0].text == brief_text(rec, lang)
    assert data["instance_type"] == rec.instance.instance_type
    assert data["instance"]["needed_per_gpu_gib"] == round(rec.instance.planned_mem_gib, 2)
    assert data["instance"]["gpu_memory_gb"] == rec.instance.gpu_memory_gib
    assert 3 <= len(data["reasons"]) <= 5 and all(r["rule_id"] in {e.rule_id for e in rec.trace} for r in data["reasons"])
    assert [a["instance_type"] for a in data["alternatives"]] == [o.instance_type for o in rec.alternatives[:2]]
    assert rec.instance.instance_type in result.content[0].text
    # texts come in the requested language only
    assert bool(CJK.search(json.dumps(data, ensure_ascii=False))) == (lang == "zh")
    assert bool(CJK.search(result.content[0].text)) == (lang == "zh")
    assert "$ref" not in json.dumps(tool.output_schema)
    # detail="full": the whole Recommendation (one language) and its Markdown
    tool, result = await _call(server, "recommend_gpu_config", {**SEMSEG, "lang": lang, "detail": "full"})
    data = _ok(tool, result)
    full = rec.model_dump(mode="json")
    assert data["full"] == one_language(full, lang) and result.content[0].text == rec.render(lang)
    assert data["full"]["memory"]["formula"] == rec.memory.formula.get(lang) and data["full"]["trace"][0]["rule_id"]
    # sections: the brief answer plus those parts, by name
    tool, result = await _call(server, "recommend_gpu_config", {**SEMSEG, "lang": lang, "sections": ["cost", "trace"]})
    data = _ok(tool, result)
    whole = one_language(full, lang)
    assert data["cost"] == whole["cost"] and data["trace"] == whole["trace"] and "memory" not in data
    assert data["instance_type"] == rec.instance.instance_type and "### cost" in result.content[0].text


@pytest.mark.parametrize("args, field", [({"detail": "everything"}, "detail"), ({"sections": ["costs"]}, "sections"),
                                         ({"sections": "cost"}, "sections")])
async def test_detail_and_sections_are_validated(server, args: dict, field: str) -> None:
    _, result = await _call(server, "recommend_gpu_config", {**SEMSEG, **args})
    assert result.is_error and field in result.content[0].text and "Traceback" not in result.content[0].text


async def test_input_size_sent_as_json_text_is_accepted(server) -> None:
    tool, result = await _call(server, "recommend_gpu_config", {**SEMSEG, "input_size": "[512, 1024]",
                                                                "sections": ["workload"]})
    assert _ok(tool, result)["workload"]["input_size"] == [512, 1024]


async def test_estimate_memory(server) -> None:
    tool, result = await _call(server, "estimate_memory", {"task": "llm_finetune", "model": "Llama 3.1 8B", "lang": "en"})
    data = _ok(tool, result)
    assert data["device_total_gib"] > data["allocated_peak_gib"] > 0 and data["breakdown"]["weights"] > 0
    assert "GiB" in result.content[0].text


async def test_ask_shares_the_cli_parser(server) -> None:
    from gpu_advisor.ask import answer_question

    question = "用 DeepLabV3+ 在 Cityscapes 上训练语义分割，1024x1024，需要什么 GPU？"
    tool, result = await _call(server, "ask", {"question": question})
    data = _ok(tool, result)
    parsed, rec = answer_question(question)
    assert data["lang"] == "zh" and data["understood"]["task"] == "semantic_segmentation"
    assert set(data["understood"]) == {u.field for u in parsed.understood}
    assert data["recommendation"]["instance_type"] == rec.instance.instance_type
    assert CJK.search(result.content[0].text)
    tool, result = await _call(server, "ask", {"question": question, "lang": "en"})
    assert _ok(tool, result)["lang"] == "en"
    tool, result = await _call(server, "ask", {"question": question, "detail": "full"})
    assert _ok(tool, result)["recommendation"]["full"]["instance"]["instance_type"] == rec.instance.instance_type


async def test_list_instance_types_filters(server) -> None:
    tool, result = await _call(server, "list_instance_types", {"gpu_count": 8, "rdma": True})
    data = _ok(tool, result)
    assert data["total"] > 0 and all(r["gpu_count"] == 8 and r["rdma"] != "none" for r in data["instance_types"])
    tool, result = await _call(server, "list_instance_types", {"gpu": "a10", "max_price_per_hour": 20, "lang": "en"})
    data = _ok(tool, result)
    assert data["region"] == "cn-hangzhou" and data["total"] > 0
    prices = [r["price_per_hour"] for r in data["instance_types"]]
    assert all(r["gpu_id"] == "A10" for r in data["instance_types"]) and prices == sorted(prices) and max(prices) <= 20
    tool, result = await _call(server, "list_instance_types", {"gpu": "A100", "limit": 1})
    data = _ok(tool, result)
    assert len(data["instance_types"]) == 1  # A100: the 40 GB of gn7 and the 80 GB of gn7e (named by the API)
    assert data["instance_types"][0]["gpu_id"] in ("A100-40GB", "AMPERE-80GB") and data["total"] == len(
        [t for t in load_catalog().instance_types.values() if t.gpu_id in ("A100-40GB", "AMPERE-80GB")])
    assert data["knowledge_version"] and data["catalog_compiled_on"]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_explain_rule(server, lang: str) -> None:
    from gpu_advisor.advisor import get_knowledge

    tool, result = await _call(server, "explain_rule", {"rule_id": "tier-entry", "lang": lang})
    data = _ok(tool, result)
    rule = get_knowledge().rules.by_id("TIER-ENTRY")
    assert data["id"] == "TIER-ENTRY" and data["title"] == rule.title.get(lang) and data["sources"] == rule.sources
    assert data["when"] and "TIER-ENTRY" in result.content[0].text


BAD = [
    # (tool, arguments, field the message must name)
    ("recommend_gpu_config", {"task": "semantic_segmentation", "num_gpus": "four"}, "num_gpus"),
    ("recommend_gpu_config", {"task": "semantic_segmentation", "num_gpus": 0}, "num_gpus"),
    ("recommend_gpu_config", {"task": "semantic_segmentation", "batch_size_per_gpu": 10**9}, "batch_size_per_gpu"),
    ("recommend_gpu_config", {"task": "segmentation"}, "task"),
    ("recommend_gpu_config", {"model": "Llama 3.1 8B"}, "task"),
    ("recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 9000B"}, "model"),
    ("recommend_gpu_config", {"task": "llm_finetune", "gpus": 8}, "gpus"),
    ("recommend_gpu_config", {"task": "inference", "interruptible": "maybe"}, "interruptible"),
    ("estimate_memory", {"task": "semantic_segmentation", "input_size": [8, 8]}, "input_size"),
    ("ask", {"question": ""}, "question"),
    ("ask", {}, "question"),
    ("list_instance_types", {"limit": 0}, "limit"),
    ("list_instance_types", {"gpu": "H800"}, "gpu"),
    ("list_instance_types", {"region": "../etc"}, "region"),
    ("explain_rule", {"rule_id": "TIER-ENTRI"}, "rule_id"),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tool_name, args, field", BAD, ids=[f"{t}-{f}-{i}" for i, (t, _, f) in enumerate(BAD)])
async def test_bad_arguments_are_tool_errors_in_the_requested_language(server, tool_name, args, field, lang) -> None:
    _, result = await _call(server, tool_name, {**args, "lang": lang})
    assert result.is_error and result.structured_content is None
    text = result.content[0].text
    assert field in text, text
    assert "Traceback" not in text and "Error executing tool" not in text and "pydantic" not in text
    if lang == "zh":
        assert CJK.search(text), text
    else:
        assert not CJK.search(text), text


async def test_suggestions_for_an_unknown_model_and_rule(server) -> None:
    _, result = await _call(server, "recommend_gpu_config", {"task": "llm_finetune", "model": "Llama 3.1 9B", "lang": "en"})
    assert result.is_error and "llama" in result.content[0].text.lower()
    _, result = await _call(server, "explain_rule", {"rule_id": "TIER-ENTRI", "lang": "en"})
    assert "TIER-ENTRY" in result.content[0].text


async def test_unexpected_failure_hides_the_exception(server, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpu_advisor

    def boom(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(gpu_advisor, "recommend", boom)
    _, result = await _call(server, "recommend_gpu_config", {"task": "semantic_segmentation"})
    assert result.is_error and "secret" not in result.content[0].text
    assert "recommend_gpu_config" in result.content[0].text and "Traceback" not in result.content[0].text


async def test_resources_carry_versions_and_dates(server) -> None:
    async def go(client):
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        catalog = json.loads((await client.read_resource("gpu-advisor://catalog/instances")).contents[0].text)
        index = json.loads((await client.read_resource("gpu-advisor://rules")).contents[0].text)
        rule = json.loads((await client.read_resource("gpu-advisor://rules/TIER-ENTRY")).contents[0].text)
        schema = json.loads((await client.read_resource("gpu-advisor://workload/schema")).contents[0].text)
        return listed, templates, catalog, index, rule, schema

    listed, templates, catalog, index, rule, schema = await _session(server, go)
    assert {"gpu-advisor://catalog/instances", "gpu-advisor://rules", "gpu-advisor://workload/schema"} <= listed
    assert "gpu-advisor://rules/{rule_id}" in templates
    for doc in (catalog, index, rule):
        assert doc["knowledge_version"] and doc["catalog_compiled_on"]
    assert catalog["instance_types"] and all("as_of" in r and "source" in r for r in catalog["instance_types"])
    assert len(index["rules"]) == index["rule_count"] and index["rules"][0]["uri"].startswith("gpu-advisor://rules/")
    assert rule["zh"]["id"] == rule["en"]["id"] == "TIER-ENTRY" and rule["en"]["sources"]
    assert schema["required"] == ["task"]


async def test_unknown_rule_resource_is_a_protocol_error(server) -> None:
    from mcp import MCPError

    async def go(client):
        try:
            await client.read_resource("gpu-advisor://rules/NOPE-1")
        except MCPError as exc:
            return exc
        return None

    error = await _session(server, go)
    assert isinstance(error, MCPError) and "no rule 'NOPE-1'" in str(error)


@pytest.mark.parametrize("uri", ["gpu-advisor://rules/" + "X" * 200_000, "gpu-advisor://nothing/" + "y" * 300,
                                 "gpu-advisor://rules/" + "Z" * 400])
async def test_long_resource_uris_are_not_echoed(server, uri: str) -> None:
    from mcp import MCPError

    async def go(client):
        try:
            await client.read_resource(uri)
        except MCPError as exc:
            return exc
        return None

    error = await _session(server, go)
    assert isinstance(error, MCPError) and len(error.message) < 600, len(error.message)


@pytest.mark.parametrize("lang, needle", [("zh", "recommend_gpu_config"), ("en", "recommend_gpu_config")])
async def test_prompts(server, lang: str, needle: str) -> None:
    async def go(client):
        names = {p.name: p for p in (await client.list_prompts()).prompts}
        got = await client.get_prompt("size_training_job", {"lang": lang, "job": "SegFormer-B5 on ADE20K"})
        empty = await client.get_prompt("size_inference_service", {"lang": lang})
        return names, got, empty

    names, got, empty = await _session(server, go)
    assert {"size_training_job", "size_inference_service"} <= set(names)
    assert {a.name for a in names["size_training_job"].arguments} == {"lang", "job"}
    text = got.messages[0].content.text
    assert needle in text and "SegFormer-B5 on ADE20K" in text and "batch_size_per_gpu" in text
    assert bool(CJK.search(text)) == (lang == "zh")
    assert "{job}" not in empty.messages[0].content.text


def test_version_does_not_import_mcp() -> None:
    code = ("import sys\nfrom gpu_advisor.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'gpu_advisor.server'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip().endswith("[]"), out


def test_serve_answers_initialize_without_loading_the_catalog_yaml_or_the_engine() -> None:
    """`gpu-advisor serve` answers `initialize` having imported the SDK and the server only: no catalog models, no
    Workload, no PyYAML (the prompts are read at the first prompts request), no engine stage (bench/cold_start.py)."""
    code = ("import os, sys\nos.environ['GPU_ADVISOR_WARM_UP'] = '0'\nfrom gpu_advisor.cli import main\n"
            "main(['serve'])\nimport json\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}}}) + "\n"
    done = subprocess.run([sys.executable, "-c", code], input=init, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "gpu-advisor"
    assert json.loads(done.stdout.splitlines()[0])["result"]["capabilities"]["prompts"] is not None
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "mcp.server.mcpserver" in modules
    loaded = {m for m in modules if m == "yaml" or m.startswith(("gpu_advisor.kb", "gpu_advisor.workload",
                                                                  "gpu_advisor.memory", "gpu_advisor.plan",
                                                                  "gpu_advisor.advisor", "gpu_advisor.server.tools"))}
    assert loaded == set(), sorted(loaded)


async def test_prompts_get_as_the_first_request_registers_the_prompts() -> None:
    """The prompts are registered by the first prompts request (server/resources.py add_prompts), a get as well as a
    list; a fresh server answers either first."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        fresh = build_server()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)

    async def go(client):
        got = await client.get_prompt("size_training_job", {"lang": "en", "job": "SegFormer-B5 on ADE20K"})
        return got, await client.list_prompts()

    got, listed = await _session(fresh, go)
    assert "SegFormer-B5 on ADE20K" in got.messages[0].content.text
    assert {p.name for p in listed.prompts} == {"size_training_job", "size_inference_service"}


def test_sdk_tracing_middleware_is_dropped_unless_opentelemetry_is_configured(monkeypatch) -> None:
    """The SDK ships one OpenTelemetry middleware on every server (fails when a release renames or moves it, so
    that the opt-out in server/app.py does not silently stop working); gpu-advisor's server drops it unless an
    OTEL_* variable is set (and OTEL_SDK_DISABLED is not true)."""
    import logging

    from mcp.server.mcpserver import MCPServer

    from gpu_advisor.server.app import is_sdk_tracing

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        assert sum(map(is_sdk_tracing, MCPServer("bare").middleware)) == 1
        for name in [n for n in __import__("os").environ if n.startswith("OTEL_")]:
            monkeypatch.delenv(name)
        assert not any(map(is_sdk_tracing, build_server().middleware))
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
        assert sum(map(is_sdk_tracing, build_server().middleware)) == 1
        monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
        assert not any(map(is_sdk_tracing, build_server().middleware))
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def test_importing_the_server_builds_nothing() -> None:
    code = ("import logging\nbefore = list(logging.getLogger().handlers)\n"
            "import gpu_advisor.server.app, gpu_advisor.server.tools, gpu_advisor.server.resources, gpu_advisor.server.http\n"
            "print(logging.getLogger().handlers == before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "True"


@pytest.mark.parametrize("question, lang", [("Fine-tune Llama 3.1 8B with LoRA, seq len 4096", "en"),
                                            ("用 LoRA 微调 Llama 3.1 8B，序列长度 4096", "zh")])
async def test_ask_answers_and_refuses_in_the_questions_language(server, question: str, lang: str) -> None:
    tool, result = await _call(server, "ask", {"question": question})
    assert _ok(tool, result)["lang"] == lang
    assert bool(CJK.search(result.content[0].text)) == (lang == "zh")
    _, result = await _call(server, "ask", {"question": question, "detail": "most"})
    assert result.is_error and "detail" in result.content[0].text
    assert bool(CJK.search(result.content[0].text)) == (lang == "zh")


@pytest.mark.parametrize("tool_name, args", [("recommend_gpu_config", {"task": "llm_finetune"}),
                                             ("ask", {"question": "what GPU for Llama 3.1 8B?"}),
                                             ("explain_rule", {"rule_id": "TIER-ENTRY"})])
@pytest.mark.parametrize("lang", ["fr", "ZH", 3, ""])
async def test_lang_outside_zh_en_is_a_tool_error_in_both_languages(server, tool_name, args, lang) -> None:
    _, result = await _call(server, tool_name, {**args, "lang": lang})
    text = result.content[0].text
    assert result.is_error and "lang" in text and "must be 'zh' or 'en'" in text and CJK.search(text), text


async def test_unknown_tool_is_a_protocol_error_listing_the_tools(server) -> None:
    from mcp import MCPError

    async def go(client):
        try:
            await client.call_tool("rm_rf", {})
        except MCPError as exc:
            return exc
        return None

    error = await _session(server, go)
    assert isinstance(error, MCPError) and error.code == -32602
    assert "rm_rf" in error.message and all(name in error.message for name in TOOLS)


@pytest.mark.parametrize("args, field", [({"lang": "fr"}, "lang"), ({"job": "x" * 5000}, "job"),
                                         ({"colour": "red"}, "colour")])
async def test_prompt_arguments_are_validated(server, args: dict, field: str) -> None:
    from mcp import MCPError

    async def go(client):
        try:
            await client.get_prompt("size_training_job", args)
        except MCPError as exc:
            return exc
        return None

    error = await _session(server, go)
    assert isinstance(error, MCPError) and error.code == -32602 and field in error.message, error
    assert "Internal" not in error.message


async def test_unknown_gpu_hint_lists_names_people_write(server) -> None:
    from gpu_advisor.kb.catalog_loader import load_catalog

    _, result = await _call(server, "list_instance_types", {"gpu": "H900", "lang": "en"})
    text = result.content[0].text
    assert result.is_error and "A10" in text and "L20" in text and "A100" in text and "V100 32GB" in text and "80GB" in text
    internal = [g.id for g in load_catalog().gpus.values() if "-" in g.id]
    assert not [gid for gid in internal if gid in text], text
    # and the names it lists are accepted
    for name in ("A100 40GB", "V100 32GB", "80GB", "96GB"):
        tool, result = await _call(server, "list_instance_types", {"gpu": name})
        assert _ok(tool, result)["total"] > 0, name


async def test_a_slow_call_is_cut_at_the_time_limit_and_does_not_stall_others(server, monkeypatch) -> None:
    """Tools run on worker threads under a per-call time limit: a call past the limit is a tool error, and a call
    made meanwhile answers at once (the event loop is free)."""
    import threading
    import time

    import anyio

    from gpu_advisor.server import tools as T

    release = threading.Event()
    original = T.SPECS["explain_rule"].handler

    def slow(q, lang):
        if q.rule_id == "TIER-ENTRY":
            release.wait(10)
        return original(q, lang)

    monkeypatch.setitem(T.SPECS, "explain_rule", T.SPECS["explain_rule"].__class__(
        **{**T.SPECS["explain_rule"].__dict__, "handler": slow}))
    monkeypatch.setenv("GPU_ADVISOR_TOOL_TIMEOUT_S", "1.5")
    timings: dict = {}

    async def go(client):
        await client.call_tool("explain_rule", {"rule_id": "MIT-AMP", "lang": "en"})  # the engine loaded first

        async def slow_call():
            t0 = time.perf_counter()
            timings["slow"] = await client.call_tool("explain_rule", {"rule_id": "TIER-ENTRY", "lang": "en"})
            timings["slow_s"] = time.perf_counter() - t0

        async with anyio.create_task_group() as group:
            group.start_soon(slow_call)
            await anyio.sleep(0.2)
            t0 = time.perf_counter()
            timings["fast"] = await client.call_tool("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"})
            timings["fast_s"] = time.perf_counter() - t0

    try:
        await _session(server, go)
    finally:
        release.set()
    assert not timings["fast"].is_error and timings["fast_s"] < 1.0, timings
    assert timings["slow"].is_error and "1.5 s" in timings["slow"].content[0].text
    assert 1.4 < timings["slow_s"] < 5, timings


async def test_cpu_bound_slow_calls_do_not_stall_a_quick_one(server, monkeypatch) -> None:
    """Four calls that keep the CPU busy (as a long question once did for 7-36 s) and a quick call made meanwhile:
    the quick one answers within 1 s, because the tools run on worker threads, not on the event loop."""
    import time

    import anyio

    from gpu_advisor.server import tools as T

    original = T.SPECS["explain_rule"].handler

    def busy(q, lang):
        if q.rule_id == "TIER-ENTRY":
            end = time.perf_counter() + 3.0
            while time.perf_counter() < end:
                sum(range(2000))
        return original(q, lang)

    monkeypatch.setitem(T.SPECS, "explain_rule", T.SPECS["explain_rule"].__class__(
        **{**T.SPECS["explain_rule"].__dict__, "handler": busy}))
    took: dict = {}

    async def go(client):
        await client.call_tool("explain_rule", {"rule_id": "MIT-AMP", "lang": "en"})  # the engine loaded first

        async def slow():
            await client.call_tool("explain_rule", {"rule_id": "TIER-ENTRY", "lang": "en"})

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(slow)
            await anyio.sleep(0.3)
            t0 = time.perf_counter()
            took["result"] = await client.call_tool("explain_rule", {"rule_id": "NET-MULTINODE", "lang": "en"})
            took["s"] = time.perf_counter() - t0

    await _session(server, go)
    assert not took["result"].is_error and took["s"] < 1.0, took["s"]
