"""One vocabulary (issue 22): every model and backbone name the knowledge base resolves (keys' displays, aliases,
same_shape names; gpu_advisor.ask.vocab.all_names) is recognised by `ask` as that same model, and a name `ask`
takes as a model is one `estimate` resolves. New registry entries are recognised without touching the parser."""

from __future__ import annotations

import pytest

from gpu_advisor.ask.parser import parse_question
from gpu_advisor.ask.vocab import all_names, find_names
from gpu_advisor.kb.models import resolve_backbone, resolve_transformer
from gpu_advisor.kb.confignames import resolve_method


def _resolved(pool: str, name: str) -> str | None:
    if pool == "transformers":
        return resolve_transformer(name)
    found = resolve_method(name) if pool == "methods" else resolve_backbone(name)
    return found[0] if found else None


def test_every_registry_name_is_recognised_as_itself() -> None:
    wrong = []
    names = all_names()
    assert len(names) > 500
    for name, pool, key in names:
        q = f"Fine-tune {name} with LoRA on 2 GPUs" if pool == "transformers" else f"Train {name} on 5000 images, batch 2"
        fields = parse_question(q).workload_fields
        got = fields.get("backbone") or fields.get("model") if pool == "backbones" else fields.get("model")
        if got is None or _resolved(pool, got) != key:
            wrong.append((name, key, got))
    assert not wrong, wrong[:20]


def test_what_ask_recognises_estimate_resolves() -> None:
    text = ("Compare Llama 3.1 8B, Qwen2.5-72B-Instruct, DeepLabV3+ R-50, Mask R-CNN R-50-FPN, SegFormer-B5, "
            "meta-llama/Llama-3.1-70B, ViT-L/16 and DeepSeek-R1-Distill-Qwen-32B")
    spans = find_names(text)
    assert len(spans) >= 9
    for span in spans:
        assert _resolved(span.pool, span.text) == span.key, span


@pytest.mark.parametrize("text", ["Foo-Qwen2.5-7B", "Qwen2.5-7B-Foo", "my-llama-3.1-8b-variant"])
def test_a_known_name_inside_another_written_name_is_not_taken(text: str) -> None:
    """"Qwen2.5-7B" inside "Qwen2.5-7B-Foo" is a different model: never answered as Qwen2.5 7B."""
    assert find_names(f"fine-tune {text} with LoRA") == []


def test_hub_suffixes_keep_the_model() -> None:
    spans = find_names("serve Qwen2.5-14B-Instruct and gemma-2-9b-it")
    assert [s.key for s in spans] == ["qwen2.5-14b", "gemma-2-9b"]
