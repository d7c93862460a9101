"""How an assistant uses the MCP tools (h13-desk): a follow-up forwarded to `ask` keeps the value it switches to and
says the one it replaced; the asked figure leads the brief whole; `recommend_gpu_config` reads enum values as people
write them ("LoRA", "AWQ", "Singapore") and an instance type or family given as gpu_preference, and says so."""

from gpu_advisor.server.tools import SPECS


def call(tool: str, args: dict) -> tuple[str, dict]:
    result = SPECS[tool].run(args)
    assert not result.is_error, result.content[0].text
    return result.content[0].text, result.structured_content


def test_ask_follow_up_switch_is_kept_and_the_replaced_value_said() -> None:
    text, data = call("ask", {"question": "之前说 LoRA 微调 Qwen2.5-7B 用一张 A10，那用两张卡呢？"})
    assert data["understood"]["num_gpus"] == 2
    assert any("一张 A10" in n and "2" in n for n in data["notes"]), data["notes"]
    assert "一张 A10" in text
    assert data["recommendation"]["instance"]["total_gpus"] == 2


def test_ask_notes_are_not_repeated() -> None:
    _, data = call("ask", {"question": "Can a gn6i (T4) instance serve Llama 3.1 8B?"})
    assert len(data["notes"]) == len(set(data["notes"])), data["notes"]


def test_asked_cost_line_leads_whole_in_the_brief() -> None:
    _, data = call("ask", {"question": "PAI-DLC 上全参微调 Llama 3.1 8B 要多少钱？"})
    first = data["recommendation"]["lead"][0]
    assert "按量付费整个作业约" in first and not first.endswith("…"), first


def test_enum_values_as_people_write_them_are_read_and_said() -> None:
    text, data = call("recommend_gpu_config", {"task": "inference", "model": "Qwen2.5-7B", "quantization": "AWQ",
                                               "region": "Singapore", "lang": "en"})
    assert text.startswith("Read as: quantization='AWQ' → int4, region='Singapore' → ap-southeast-1"), text[:200]
    assert data["instance"]["price_region"] == "ap-southeast-1"
    text, _ = call("recommend_gpu_config", {"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "LoRA"})
    assert "读作" not in text     # a case-only difference is not worth a line
    bad = SPECS["recommend_gpu_config"].run({"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "adapter"})
    assert bad.is_error and "full, lora, qlora" in bad.content[0].text


def test_instance_type_or_family_as_gpu_preference() -> None:
    for pref in ("ecs.gn7i-c8g1.2xlarge", "gn7i"):
        _, data = call("recommend_gpu_config", {"task": "inference", "model": "Qwen2.5-7B", "gpu_preference": pref})
        assert data["instance"]["gpu"] == "NVIDIA A10 24 GB", (pref, data["instance"])


def test_gpu_and_region_question_without_a_job_says_the_catalog_prices() -> None:
    import re

    result = SPECS["ask"].run({"question": "新加坡和杭州的 A10 价格差多少？"})
    text = result.content[0].text
    assert result.is_error   # no job: still a refusal that asks for one, now with the facts the catalog has
    assert re.search(r"A10 在 cn-hangzhou：ecs\.gn7i-\S+（1 卡）每小时 [\d.]+ CNY；A10 在 ap-southeast-1：ecs\.", text), text
    result = SPECS["ask"].run({"question": "Why gn7e and not gn8v?", "lang": "en"})
    text = result.content[0].text
    assert "A100 80GB in cn-hangzhou: ecs.gn7e-" in text and "96GB in cn-hangzhou: no list price" in text, text
