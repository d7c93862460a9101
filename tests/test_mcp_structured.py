"""The tools publish structured content in one language in one pass (Text's serializer, ``structured()``): the
same as dumping both languages and replacing every {"zh", "en"} pair afterwards (``one_language``), for every
tool and mixed inputs."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from latency import mixed_workloads  # noqa: E402

from gpu_advisor.util.i18n import Text  # noqa: E402
from gpu_advisor.server import tools as T  # noqa: E402
from one_language import one_language  # noqa: E402

from gpu_advisor.server.registry import structured  # noqa: E402


def outputs():
    for i, w in enumerate(mixed_workloads(60, seed=17)):
        lang = w["lang"]
        workload = T._workload(dict(w), lang)
        yield f"recommend {i}", T.recommend_gpu_config(T._recommend_request(dict(w), lang), lang)[0], lang
        full = T._recommend_request({**w, "detail": "full"}, lang)
        yield f"recommend full {i}", T.recommend_gpu_config(full, lang)[0], lang
        yield f"estimate {i}", T.estimate_memory(workload, lang)[0], lang
    for lang in ("zh", "en"):
        yield "ask", T.ask(T.AskInput(question="用 DeepLabV3+ 在 Cityscapes 上训练，1024x1024，8 卡"), lang)[0], "zh"
        yield "list", T.list_instance_types(T.CatalogQuery(gpu="L20", region="cn-hangzhou"), lang)[0], lang
        for rule_id in ("TIER-ENTRY", "NET-MULTINODE", "MIT-AMP"):
            yield "explain", T.explain_rule(T.RuleQuery(rule_id=rule_id), lang)[0], lang


@pytest.mark.parametrize("label, output, lang", list(outputs()), ids=lambda x: x if isinstance(x, str) else "")
def test_one_pass_equals_dump_then_walk(label, output, lang):
    lang = getattr(output, "lang", None) or lang
    assert structured(output, lang) == one_language(output.model_dump(mode="json"), lang), label


def test_text_dumps_both_languages_without_the_context():
    text = Text(zh="中文", en="English")
    assert text.model_dump() == {"zh": "中文", "en": "English"}
    assert text.model_dump_json() == '{"zh":"中文","en":"English"}'
    assert text.model_dump(mode="json", context={"lang": "en"}) == "English"
    assert Text.model_json_schema(mode="serialization") == Text.model_json_schema()
