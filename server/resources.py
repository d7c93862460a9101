"""MCP resources (the catalog, the rules, the Workload schema) and prompts (prompts/mcp_prompts.yaml).

Every resource is JSON and carries the knowledge version and the catalog's compiled_on date; catalog rows
and rules carry their own as_of / since and sources.
"""

import functools
import json
from collections.abc import Callable
from functools import lru_cache
from importlib import resources as importlib_resources
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp_types import Annotations

JSON = "application/json"
KNOWLEDGE = Annotations(audience=["user", "assistant"], priority=0.5)


def _engine(read: Callable[..., str]) -> Callable[..., str]:
    """A resource that reads the engine: its modules are imported once, under the tools' lock (server/warmup.py)."""

    @functools.wraps(read)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        from gpu_advisor.server.warmup import import_engine

        import_engine()
        return read(*args, **kwargs)

    return wrapper


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, default=str)


def _versions() -> dict[str, Any]:
    from gpu_advisor.advisor import get_knowledge

    kb = get_knowledge()
    return {"knowledge_version": kb.catalog.meta.knowledge_version, "catalog_compiled_on": kb.catalog.meta.compiled_on,
            "rule_count": len(kb.rules.active)}


@_engine
def catalog_instances() -> str:
    """Every GPU instance type in the dated catalog (no prices: see list_instance_types with a region)."""
    from gpu_advisor.advisor import get_knowledge
    from gpu_advisor.kb.listing import catalog_rows

    meta = get_knowledge().catalog.meta
    return _dump({**_versions(), "caveats": list(meta.caveats), "instance_types": catalog_rows()})


@_engine
def rules_index() -> str:
    """Ids, titles (zh and en) and dates of the active rules."""
    from gpu_advisor.advisor import get_knowledge

    rules = [{"id": r.id, "title": r.title.model_dump(), "since": r.since, "uri": f"gpu-advisor://rules/{r.id}"}
             for r in get_knowledge().rules.active]
    return _dump({**_versions(), "rules": rules})


@_engine
def rule_detail(rule_id: str) -> str:
    """One rule in zh and en: text, conditions, sources."""
    from gpu_advisor.advisor import get_knowledge
    from gpu_advisor.kb.listing import rule_summary

    rule = get_knowledge().rules.by_id(rule_id.upper())
    if rule is None:
        shown = rule_id if len(rule_id) <= 40 else rule_id[:37] + "..."
        raise ResourceNotFoundError(f"no rule '{shown}'; list them at gpu-advisor://rules")
    return _dump({**_versions(), "zh": rule_summary(rule, "zh"), "en": rule_summary(rule, "en")})


@_engine
def workload_schema() -> str:
    """The JSON schema of a Workload (the input of recommend_gpu_config and estimate_memory)."""
    from gpu_advisor.workload import Workload

    return _dump(Workload.model_json_schema())


def add_resources(server: MCPServer) -> None:
    server.resource("gpu-advisor://catalog/instances", name="catalog-instances", title="GPU instance catalog",
                    description=catalog_instances.__doc__, mime_type=JSON, annotations=KNOWLEDGE)(catalog_instances)
    server.resource("gpu-advisor://rules", name="rules", title="Rule index", description=rules_index.__doc__,
                    mime_type=JSON, annotations=KNOWLEDGE)(rules_index)
    server.resource("gpu-advisor://rules/{rule_id}", name="rule", title="One rule", description=rule_detail.__doc__,
                    mime_type=JSON, annotations=KNOWLEDGE)(rule_detail)
    server.resource("gpu-advisor://workload/schema", name="workload-schema", title="Workload JSON schema",
                    description=workload_schema.__doc__, mime_type=JSON)(workload_schema)


@lru_cache(maxsize=1)
def load_prompts() -> dict[str, Any]:
    from gpu_advisor.util import yamlio

    text = (importlib_resources.files("gpu_advisor.prompts") / "mcp_prompts.yaml").read_text(encoding="utf-8")
    return yamlio.safe_load(text)


def _make_prompt(name: str, spec: dict[str, Any]) -> Prompt:
    def render(lang: str = "zh", job: str = "") -> list[UserMessage]:
        if lang not in ("zh", "en"):
            raise ValueError("lang must be 'zh' or 'en'")
        described = job.strip()[:4000] or spec["empty_job"][lang]
        return [UserMessage(spec["text"][lang].replace("{job}", described))]

    render.__doc__ = f"{spec['description']['en']} / {spec['description']['zh']}"
    prompt = Prompt.from_function(render, name=name, title=f"{spec['title']['en']} / {spec['title']['zh']}",
                                  description=render.__doc__)
    described = {"lang": "Language of the conversation: zh or en (default zh).",
                 "job": "The user's own description of the job, if any."}
    for argument in prompt.arguments or []:
        argument.description = described.get(argument.name, argument.description)
    return prompt


PROMPT_METHODS = frozenset({"prompts/list", "prompts/get"})


def add_prompts(server: MCPServer) -> None:
    """The prompts of prompts/mcp_prompts.yaml, registered when a client first asks for prompts (the first prompts/list
    or prompts/get, from a middleware ahead of the request checks): reading them imports PyYAML, about 20 ms that
    would otherwise be part of every start's `initialize` (bench/cold_start.py). The capability is advertised either
    way (the SDK advertises prompts by their handler)."""
    registered = False

    async def register_prompts(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        nonlocal registered
        if not registered and ctx.method in PROMPT_METHODS:
            registered = True  # no await before the loop below: one request registers them
            for name, spec in load_prompts().items():
                server.add_prompt(_make_prompt(name, spec))
        return await call_next(ctx)

    server.middleware.append(register_prompts)
