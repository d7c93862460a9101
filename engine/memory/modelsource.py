"""A model given by its config: a path to a config.json (or a folder holding one), or a Hugging Face model id.

- Path: read and counted by gpu_advisor.memory.hfconfig (cached per path and modification time).
- Hub id ("Qwen/Qwen3-30B-A3B") that the knowledge base does not ship: config.json only (no weights), fetched with
  huggingface_hub when it is installed (optional: `pip install huggingface_hub`, extra `hub`), which caches it on
  disk (HF_HUB_CACHE) and honours HF_HUB_OFFLINE, HF_ENDPOINT (a mirror, e.g. for the Chinese mainland) and
  HF_TOKEN (gated repositories). Without it, or without network, the error says to pass the config file.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from gpu_advisor.errors import WorkloadError
from gpu_advisor.memory.hfconfig import check_config, count, load_config, spec_fields
from gpu_advisor.kb.models import TransformerSpec

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")
_PASS_FILE_EN = "pass the model's config.json instead: --model path/to/config.json (or a folder holding it)"
_PASS_FILE_ZH = "请改为提供模型的 config.json：--model path/to/config.json（或包含它的文件夹）"


def looks_like_path(name: str) -> bool:
    return name.endswith(".json") or name.startswith(("/", "./", "../", "~")) or "\\" in name or (
        os.sep in name and Path(name).expanduser().exists())


def looks_like_hub_id(name: str) -> bool:
    return bool(HUB_ID.match(name.strip())) and not looks_like_path(name)


def spec_from_config(cfg: dict, key: str, display: str, source: str) -> TransformerSpec:
    try:
        fields = spec_fields(count(cfg))
        return TransformerSpec(key=key, display=display, source=source, **fields)
    except (TypeError, ValueError, ZeroDivisionError, KeyError) as exc:   # pydantic's ValidationError is a ValueError
        raise WorkloadError(f"model: {source} is not a config this estimator can count ({exc.__class__.__name__}: "
                            f"{str(exc)[:120]})", f"model：无法按 {source} 计数（{exc.__class__.__name__}：{str(exc)[:120]}）",
                            field="model") from None


@lru_cache(maxsize=64)
def _from_file(path: str, mtime: float) -> TransformerSpec:
    cfg = load_config(path)
    name = Path(path).parent.name if Path(path).name == "config.json" else Path(path).stem
    return spec_from_config(cfg, f"config:{name}", f"{name} (config.json)", f"config file {path}")


def from_path(name: str) -> TransformerSpec:
    if os.environ.get("GPU_ADVISOR_NO_CONFIG_PATHS", "").strip().lower() in ("1", "true", "yes", "on"):
        raise WorkloadError("model: config file paths are turned off here (GPU_ADVISOR_NO_CONFIG_PATHS); give a known "
                            "model name or a Hugging Face model id",
                            "model：此处不接受配置文件路径（GPU_ADVISOR_NO_CONFIG_PATHS）；请提供已知模型名或 "
                            "Hugging Face 模型 ID", field="model")
    p = Path(name).expanduser()
    target = p / "config.json" if p.is_dir() else p
    try:
        mtime = target.stat().st_mtime
    except OSError as exc:
        raise WorkloadError(f"model: no config file at {name!r} ({exc.__class__.__name__}); give a config.json path, "
                            "a folder holding one, a Hugging Face model id or a known model name",
                            f"model：{name!r} 处没有配置文件（{exc.__class__.__name__}）；请提供 config.json 路径、"
                            "包含它的文件夹、Hugging Face 模型 ID 或已知模型名", field="model") from exc
    return _from_file(str(target.resolve()), mtime)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


@lru_cache(maxsize=64)
def _from_hub(repo_id: str, endpoint: str | None, offline: bool) -> TransformerSpec:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise WorkloadError(f"model: {repo_id!r} is not in the knowledge base and huggingface_hub is not installed to "
                            f"read its config from the Hub (pip install huggingface_hub); or {_PASS_FILE_EN}",
                            f"model：知识库中没有 {repo_id!r}，且未安装 huggingface_hub，无法从 Hub 读取其配置"
                            f"（pip install huggingface_hub）；或{_PASS_FILE_ZH}", field="model") from None
    where = endpoint or "https://huggingface.co"
    try:
        path = hf_hub_download(repo_id, "config.json", endpoint=endpoint, token=os.environ.get("HF_TOKEN") or None,
                               cache_dir=os.environ.get("HF_HUB_CACHE") or None, local_files_only=offline,
                               etag_timeout=10)
    except Exception as exc:   # huggingface_hub raises its own errors, httpx / requests ones and OSError
        kind = exc.__class__.__name__
        if offline:
            why_en, why_zh = "HF_HUB_OFFLINE is set and its config.json is not in the local cache", \
                "已设置 HF_HUB_OFFLINE，且本地缓存中没有其 config.json"
        elif "Gated" in kind or "401" in str(exc) or "403" in str(exc):
            why_en, why_zh = "the repository is gated: set HF_TOKEN to a token with access", \
                "该仓库需授权：请把 HF_TOKEN 设为有权限的令牌"
        elif "NotFound" in kind or "404" in str(exc):
            why_en, why_zh = f"{where} has no such model (or no config.json in it)", f"{where} 上没有该模型（或没有 config.json）"
        else:
            why_en, why_zh = (f"{where} cannot be reached ({kind}); a mirror can be set with HF_ENDPOINT",
                              f"无法访问 {where}（{kind}）；可用 HF_ENDPOINT 设置镜像")
        raise WorkloadError(f"model: {repo_id!r} is not in the knowledge base and its config cannot be read from the "
                            f"Hub: {why_en}; {_PASS_FILE_EN}",
                            f"model：知识库中没有 {repo_id!r}，且无法从 Hub 读取其配置：{why_zh}；{_PASS_FILE_ZH}",
                            field="model") from None
    cfg = load_config(path)
    check_config(cfg, repo_id)
    return spec_from_config(cfg, f"hub:{repo_id}", repo_id, f"{where}/{repo_id}/blob/main/config.json")


def from_hub(repo_id: str) -> TransformerSpec:
    return _from_hub(repo_id.strip(), os.environ.get("HF_ENDPOINT") or None, _offline())
