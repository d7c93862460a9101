"""What a question means: serving uses, head counts, misspelt task verbs, instance families, iterations
(gpu_advisor.ask.typos / population / families; parser._iterations). The end-to-end cases are in tests/answers."""

from __future__ import annotations

import re

import pytest

from gpu_advisor.ask import parse_question
from gpu_advisor.ask.population import share as population_share
from gpu_advisor.ask.typos import osa_distance
from gpu_advisor.util import yamlio


def _typos(q: str) -> dict[str, str]:
    return {h.matched: re.search(r"as '(.+)'", h.text.en).group(1) for h in parse_question(q).hints if h.kind == "typo"}


@pytest.mark.parametrize("a,b,d", [("infernce", "inference", 1), ("trian", "train", 1), ("fine-tuen", "fine-tune", 1),
                                   ("difference", "inference", 2), ("abc", "abc", 0), ("kitten", "sitting", 3)])
def test_osa_distance(a: str, b: str, d: int) -> None:
    assert osa_distance(a, b, 3) == d


@pytest.mark.parametrize("q,word,verb", [
    ("Llama 3.1 8B infernce on A10", "infernce", "inference"),
    ("trian ResNet-50 on ImageNet", "trian", "train"),
    ("fine-tuen Llama 3.1 8B with LoRA", "fine-tuen", "fine-tune"),
    ("deply Llama 3.1 8B", "deply", "deploy"),
    ("serivng Llama 3.1 8B", "serivng", "serving"),
    ("部属Qwen2.5-7B需要什么卡", "部属", "部署"),
    ("用A10做推里，Qwen2.5-7B", "推里", "推理"),
    ("Qwen2.5-7B 训炼 LoRA", "训炼", "训练"),
])
def test_misspelt_task_verbs_are_read_and_said_back(q: str, word: str, verb: str) -> None:
    assert _typos(q) == {word: verb}


@pytest.mark.parametrize("q", [
    "what's the difference between A10 and L20 for Qwen2.5-7B serving",   # first letter kept: not "inference"
    "for reference, serve Qwen2.5-7B on one A10",
    "which server for HF Trainer fine-tuning of Qwen2.5-7B",             # words the lexicon knows are never touched
    "部署 Qwen2.5-7B，预算上限每小时 20 元",                             # 上限 reads like 上线, which is not a verb here
    "我对阿里云不熟，部署 Qwen2.5-7B 用什么卡",                          # 不熟 differs from 部署 in both characters
    "部署Qwen2.5-7B，这不属于训练",
])
def test_real_words_are_not_corrected(q: str) -> None:
    assert _typos(q) == {}


def test_homophone_table_covers_the_lexicon_verbs() -> None:
    """knowledge/ask/homophones.yaml is generated from the lexicon's zh verbs (tools/gen_homophones.py): one list of
    characters per character of each verb, none of them the verb's own character."""
    from importlib.resources import files

    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath("ask/lexicon.yaml").read_text(encoding="utf-8"))
    table = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath("ask/homophones.yaml").read_text(encoding="utf-8"))
    verbs = raw["task_verbs"]["zh"]
    assert set(table["homophones"]) == set(verbs)
    for verb, per_char in table["homophones"].items():
        assert len(per_char) == len(verb) == len(verbs[verb].split())
        assert all(ch not in chars for ch, chars in zip(verb, per_char))


@pytest.mark.parametrize("q,users", [
    ("我们团队30个工程师要用DeepSeek-R1-Distill-Qwen-32B做代码助手，需要什么配置", 8),
    ("Qwen2.5-14B for 200 employees, which instance?", 50),
    ("a team of 30 engineers will use Qwen2.5-32B", 8),
    ("我们组15个人，部署Qwen2.5-7B", 4),
    ("Llama 3.1 8B for a 50-person team", 13),
    ("想在阿里云部署qwen2.5 72b，int4量化，大概50个人用", 13),
])
def test_a_head_count_is_a_population_served_at_the_stated_share(q: str, users: int) -> None:
    p = parse_question(q)
    share = float(population_share()["active_share"])
    assert p.workload_fields["task"] == "inference"
    assert p.workload_fields["concurrent_users"] == users
    said = next(a for a in p.assumed if a.field == "concurrent_users")
    assert f"{share:.0%}" in said.reason.en and "population" in said.reason.en


def test_a_stated_concurrency_wins_and_training_says_the_head_count_back() -> None:
    p = parse_question("团队30人，部署Qwen2.5-7B，并发10")
    assert p.workload_fields["concurrent_users"] == 10 and [u.matched for u in p.unused] == ["团队30人"]
    p = parse_question("a team of 30 engineers wants to fine-tune Llama 3.1 8B with LoRA")
    assert p.workload_fields["task"] == "llm_finetune" and "concurrent_users" not in p.workload_fields
    assert [u.matched for u in p.unused] == ["team of 30 engineers"]


@pytest.mark.parametrize("q", ["用 DeepSeek-R1-Distill-Qwen-32B 做代码助手", "Llama 3.1 8B for our internal assistant",
                               "Qwen2.5-14B 搭一个知识库问答", "Llama 3.1 8B as a chatbot for customer support"])
def test_a_use_of_a_model_is_serving(q: str) -> None:
    assert parse_question(q).workload_fields["task"] == "inference"


def test_a_use_word_with_a_training_verb_stays_training() -> None:
    assert parse_question("用客服对话数据微调 Qwen2.5-7B 做客服助手").workload_fields["task"] == "llm_finetune"


def test_no_verb_the_serving_default_is_an_assumption_said_with_the_answer() -> None:
    p = parse_question("DeepSeek-R1-Distill-Qwen-32B 需要什么配置")
    assert p.workload_fields["task"] == "inference"
    assert "task" not in p.stated()   # the terminal asks: train or serve?
    assert any(a.field == "task" and "训练还是部署" in a.reason.zh for a in p.assumed)


@pytest.mark.parametrize("q,first,other", [("gn7i和gn8is哪个更适合跑Llama-3-8B推理？", "A10", "L20"),
                                           ("gn8v or gn7e for Qwen2.5-72B inference?", "96GB", "A100 80GB"),
                                           ("GN7i vs GN8IS for Qwen2.5-7B serving", "A10", "L20")])
def test_instance_families_are_their_gpus_compared(q: str, first: str, other: str) -> None:
    p = parse_question(q)
    assert p.workload_fields["gpu_preference"] == first
    assert [h.matched for h in p.hints if h.kind == "gpu_compare"] == [other]


def test_every_catalog_family_is_read_or_said_back() -> None:
    from gpu_advisor.kb.catalog_loader import load_catalog

    for family in load_catalog().families:
        p = parse_question(f"{family} 部署 Qwen2.5-7B")
        read = any(h.kind == "instance_family" and h.matched == family for h in p.hints)
        said = any(u.matched == family for u in p.unused)
        assert read != said, family
        if read:
            assert p.workload_fields.get("gpu_preference"), family


@pytest.mark.parametrize("q,epochs", [("Train ResNet-50 on ImageNet for 160k iterations, batch 256", 160_000 * 256 / 1_281_167),
                                      ("DeepLabV3+ R-50 Cityscapes，8卡每卡batch 2，训练80k iters", 80_000 * 16 / 2975),
                                      ("SegFormer-B5 ADE20K max_iters=160000 total batch 16", 160_000 * 16 / 20210)])
def test_iterations_become_epochs(q: str, epochs: float) -> None:
    assert parse_question(q).workload_fields["epochs"] == pytest.approx(epochs, rel=1e-3)


def test_iterations_without_batch_or_data_are_said_back_and_warmup_is_not_training_length() -> None:
    p = parse_question("Mask R-CNN 训练 9 万步")
    assert "epochs" not in p.workload_fields and [u.matched for u in p.unused] == ["9 万步"]
    p = parse_question("lora微调qwen2.5-7b，batch 4，1万条，warmup 100 steps, 训练 3000 步")
    assert p.workload_fields["epochs"] == pytest.approx(1.2)
