"""Never answer for another model (issue 22): a model name the knowledge base does not know is refused (library,
--no-input, MCP) naming the closest known models and how to proceed, or asked about in a terminal; it is never
replaced by the task's typical model. A name that is clearly a language model is never sized as a vision model."""

from __future__ import annotations

import argparse
import io

import pytest

from gpu_advisor import recommend
from gpu_advisor.ask import answer_question
from gpu_advisor.cli.ask_args import add_ask_parser
from gpu_advisor.cli.ask import run_ask
from gpu_advisor.errors import UnknownModelError
from gpu_advisor.kb.models import looks_like_llm
from gpu_advisor.workload import Workload


class TTYStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(question: str, *flags: str, stdin: io.StringIO | None = None) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_ask_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    code = run_ask(parser.parse_args(["ask", question, *flags]), stdin=stdin or io.StringIO(""), stdout=out)
    return code, out.getvalue()


@pytest.mark.parametrize("question, near", [
    ("What GPU do I need to fine-tune Mixtral 8x7B with LoRA?", "Mistral"),
    ("微调 Llama 需要什么显卡？", "llama"),
    ("Fine-tune FooBarNet-7B with LoRA on 2 GPUs", ""),
    ("DeepSeek-R1 满血版部署需要几张 H20？", "DeepSeek"),
])
def test_library_refuses_an_unknown_model_with_the_closest_known(question: str, near: str) -> None:
    try:
        _, rec = answer_question(question)
    except UnknownModelError as exc:
        assert exc.field == "model" and exc.suggestions
        assert near.lower() in " ".join(exc.suggestions).lower()
        assert "params" in exc.message("en") and "参数" in exc.message("zh")
        return
    # a registry that has since learnt the model must size that model, never another
    assert any(w in rec.memory.profile.key for w in ("mixtral", "deepseek-r1", "foobar")), rec.memory.profile.key


def test_no_input_exits_2_in_the_questions_language(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run("微调 Llama 需要什么显卡？", "--no-input")
    err = capsys.readouterr().err
    assert code == 2 and out == ""
    assert "知识库中没有" in err and "llama" in err.lower()


def test_a_stated_size_sizes_the_named_model_as_a_language_model() -> None:
    """A name the registry does not know, with its size stated: a transformer of that size, said so, never the
    image-classifier default (issue 22: 'DeepSeek-V3 (671B MoE) in FP8' got 1,375 GiB per GPU when it was unknown)."""
    _, rec = answer_question("What do I need to serve Zeta-LM (70B) in FP8?")
    prof = rec.memory.profile
    assert prof.is_llm and prof.params_billion == pytest.approx(70) and prof.key == "unknown"
    # the same question about DeepSeek-V3, which the registry now ships: its own shapes (MoE, MLA), not a size guess
    _, rec = answer_question("What do I need to serve DeepSeek-V3 (671B MoE) in FP8?")
    assert rec.memory.profile.key == "deepseek-v3" and rec.memory.profile.params_billion == pytest.approx(671, rel=0.01)


@pytest.mark.parametrize("name", ["DeepSeek-R1-Distill-Foo-32B", "FooLM-7B-Instruct", "Bar 8x7B", "my-qwen-variant"])
def test_llm_names_are_never_sized_with_a_vision_profile(name: str) -> None:
    assert looks_like_llm(name)
    rec = recommend(Workload(task="inference", model=name, params_billion=7), lang="en")
    assert rec.memory.profile.is_llm, rec.memory.profile


@pytest.mark.parametrize("name", ["ResNet-50", "DeepLabV3+", "Mask R-CNN", "YOLOv8", "SegFormer-B5"])
def test_vision_names_are_not_llm_names(name: str) -> None:
    assert not looks_like_llm(name)


def test_r1_in_a_model_name_is_not_a_lora_rank() -> None:
    parsed, _ = answer_question("DeepSeek-R1-Distill-Qwen-32B 部署需要多少显存？")
    assert "lora_rank" not in parsed.workload_fields


def test_a_terminal_asks_which_known_model_and_answers_for_the_choice() -> None:
    """In a terminal the unknown name is asked about: 'a' picks the first closest known model."""
    stdin = TTYStringIO("a\n\n\n\n\n\n\n\nq\n")
    code, out = _run("What GPU do I need to fine-tune Mixtral 8x7B with LoRA?", stdin=stdin)
    if "Mixtral" in out and "Closest known" not in out:
        pytest.skip("the registry knows Mixtral now")
    assert code == 0
    assert "Closest known" in out and "a) Mistral 7B" in out and "ecs." in out


def test_a_terminal_takes_a_parameter_count() -> None:
    stdin = TTYStringIO("46.7\n\n\n\n\n\n\n\nq\n")
    code, out = _run("What GPU do I need to fine-tune Mixtral 8x7B with LoRA?", stdin=stdin)
    if "Closest known" not in out:
        pytest.skip("the registry knows Mixtral now")
    assert code == 0 and "ecs." in out and "Mixtral 8x7B" in out


def test_a_terminal_refuses_at_end_of_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run("微调 Llama 需要什么显卡？", stdin=TTYStringIO(""))
    assert code == 2


def test_the_ruled_out_section_the_findings_refer_to_is_printed() -> None:
    """Starting case 20: a finding says 'reasons under "被排除的 GPU"'; the terminal answer prints that section."""
    code, out = _run("训练一个 UNet，图片 4096×4096，batch 2，FP16，显存够不够 A10？", "--no-input")
    assert code == 0
    if "原因见“被排除的 GPU”" in out:
        assert "\n被排除的 GPU\n" in out and "NVIDIA A10 24 GB：" in out
