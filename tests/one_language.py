"""The reference form of the MCP tools' structured content: a bilingual dump with every {"zh": str, "en": str}
pair replaced by the string in ``lang``. The server builds the same in one pass (gpu_advisor.server.registry
``structured()``); the tests compare the two."""

from typing import Any


def one_language(data: Any, lang: str) -> Any:
    if isinstance(data, dict):
        if len(data) == 2 and "zh" in data and "en" in data and isinstance(data["en"], str) and isinstance(data["zh"], str):
            return data[lang]
        return {k: one_language(v, lang) for k, v in data.items()}
    if isinstance(data, list):
        return [one_language(v, lang) for v in data]
    return data
