"""The rule format: one YAML entry per rule, validated strictly (unknown keys are errors).

    - id: NET-RDMA-001
      title: {zh: ..., en: ...}
      when:
        all: [{field: multi_node, op: is, value: true}]     # conditions on the job facts
        derived: [training]                                 # facts other rules asserted
      then:
        assert: [needs_rdma]                                # derived facts for further rules
        set: {network: erdma}                               # structured choices
        section: network                                    # where the advice goes
        advice: {zh: ..., en: ...}                          # "{field}" interpolates a fact
      why: {zh: ..., en: ...}
      sources: [...]
      since: "0.1.0"
      cases: {fires: [workload...], silent: [workload...]}
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpu_advisor.util.i18n import Text

RULE_ID = re.compile(r"^(TASK|TIER|FIT|MIT|PREC|CPU|RAM|STOR|NET|COST|PLAT|INF|PRE|OS|MON)-[A-Z0-9]+(-[A-Z0-9]+)*$")
DERIVED_NAME = re.compile(r"^[a-z][a-z0-9_]{1,40}$")

Op = Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "is"]
Scalar = bool | int | float | str

SECTIONS = ("lead", "tier", "memory", "gpu", "precision", "mitigation", "cpu", "ram", "storage", "network",
            "cost", "platform", "inference", "preprocessing", "os", "monitoring", "warning")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Condition(_Strict):
    field: str
    op: Op
    value: Scalar | list[Scalar]

    @field_validator("value")
    @classmethod
    def _list_only_for_membership(cls, value: Any, info: Any) -> Any:
        op = info.data.get("op")
        if op in ("in", "not_in") and not (isinstance(value, list) and value):
            raise ValueError(f"op '{op}' needs a non-empty list value")
        if op not in ("in", "not_in") and isinstance(value, list):
            raise ValueError(f"op '{op}' needs a single value, not a list")
        if op == "is" and not isinstance(value, bool):
            raise ValueError("op 'is' needs true or false")
        return value


class When(_Strict):
    all: list[Condition] = Field(default_factory=list)
    derived: list[str] = Field(default_factory=list)

    @field_validator("derived")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not DERIVED_NAME.match(name):
                raise ValueError(f"derived fact name {name!r} must be snake_case")
        return value


class Then(_Strict):
    assert_: list[str] = Field(default_factory=list, alias="assert")
    set: dict[str, Scalar] = Field(default_factory=dict)
    section: str | None = None
    advice: Text | None = None
    priority: int = 0

    @field_validator("section")
    @classmethod
    def _section(cls, value: str | None) -> str | None:
        if value is not None and value not in SECTIONS:
            raise ValueError(f"section must be one of {', '.join(SECTIONS)}")
        return value


class Cases(_Strict):
    fires: list[dict[str, Any]] = Field(min_length=1)
    silent: list[dict[str, Any]] = Field(min_length=1)


class Rule(_Strict):
    id: str
    title: Text
    when: When
    then: Then
    why: Text
    sources: list[str] = Field(min_length=1)
    since: str
    cases: Cases
    deprecated: bool = False

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not RULE_ID.match(value):
            raise ValueError("id must look like DOMAIN-NAME with a known domain prefix (e.g. NET-RDMA-001)")
        return value

    @property
    def domain(self) -> str:
        return self.id.split("-", 1)[0]

    def fields(self) -> list[str]:
        return [c.field for c in self.when.all]
