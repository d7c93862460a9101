"""gpu_advisor.util.yamlio: the C safe loader reads every shipped YAML file exactly as PyYAML's pure-Python safe loader,
and is as safe."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpu_advisor.util import yamlio

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted([*ROOT.glob("knowledge/**/*.yaml"), *ROOT.glob("prompts/**/*.yaml"), *ROOT.glob("examples/*.yaml")])


def test_every_shipped_file_is_checked():
    names = {p.relative_to(ROOT).as_posix() for p in SHIPPED}
    assert {"knowledge/rules/10_task_tier.yaml", "knowledge/catalog/instance_types.yaml",
            "prompts/mcp_prompts.yaml", "prompts/messages.yaml"} <= names
    assert len(SHIPPED) >= 20


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_same_data_as_the_pure_python_loader(path):
    text = path.read_text(encoding="utf-8")
    expected = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - the reference safe loader
    got = yamlio.safe_load(text)
    assert got == expected
    assert repr(got) == repr(expected)  # also the types (1 vs 1.0 vs True) and the key order


def test_uses_libyaml_when_pyyaml_has_it():
    assert yamlio.SafeLoader is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


@pytest.mark.parametrize("text", ["!!python/object/apply:os.system ['echo pwned']", "x: !!python/name:os.system ''",
                                  "!!python/object:collections.OrderedDict {}"])
def test_refuses_tags_that_build_objects(text):
    with pytest.raises(yamlio.YAMLError):
        yamlio.safe_load(text)
