"""Refusals answer the question that was asked (issue 22, starting cases 10 and 14)."""

from __future__ import annotations

import json

import pytest

from gpu_advisor.ask import parse_question
from gpu_advisor.cli.main import main
from gpu_advisor.errors import WorkloadError


def test_a_refusal_under_json_is_json_and_speaks_of_serving(capsys) -> None:
    code = main(["ask", "Serve Stable Diffusion XL on Alibaba Cloud", "--no-input", "--json"])
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert code == 2 and doc["error"]["field"] == "model" and "training" not in doc["error"]["message"]
    assert "serve one request" in doc["error"]["message"]


def test_a_gpu_only_question_says_whether_the_catalog_has_it_in_names_people_write() -> None:
    with pytest.raises(WorkloadError) as info:
        parse_question("我只有 H100，可以在阿里云买到吗？")
    zh = info.value.message("zh")
    assert "没有 H100" in zh and "A100 80 GB" in zh and "141 GB" in zh
    assert "AMPERE-80GB" not in zh and "A100-40GB" not in zh and "gn7e" not in zh  # no internal ids, no stale note
    with pytest.raises(WorkloadError) as info:
        parse_question("Can I buy A10 instances on Alibaba Cloud?")
    assert info.value.message("en").startswith("question: A10 is in the catalog.")
