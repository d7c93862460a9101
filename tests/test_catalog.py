"""The shipped catalog: the seed answers' errors are impossible, and every fact carries provenance."""

from __future__ import annotations

import re

import pytest

from gpu_advisor.kb.catalog import Catalog, is_mainland
from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.errors import KnowledgeError


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog()


def test_counts(cat: Catalog) -> None:
    assert len(cat.families) == 53  # 33 from the family pages + 20 from the recorded API listing (issue 19)
    assert len(cat.instance_types) == 174  # 113 + 7 sizes + 54 types of the API-only families
    assert len(cat.prices) == 988  # 71 from the research file + 917 of the recorded snapshot (547 in the mainland)
    assert len(cat.gpus) == 24
    assert cat.regions() == ["ap-northeast-1", "ap-northeast-2", "ap-southeast-1", "ap-southeast-3", "ap-southeast-5",
                             "ap-southeast-6", "ap-southeast-7", "cn-beijing", "cn-chengdu", "cn-fuzhou",
                             "cn-guangzhou", "cn-hangzhou", "cn-heyuan", "cn-hongkong", "cn-huhehaote", "cn-nanjing",
                             "cn-qingdao", "cn-shanghai", "cn-shenzhen", "cn-wuhan-lr", "cn-wulanchabu",
                             "cn-zhangjiakou", "eu-central-1", "us-east-1", "us-west-1"]


# -- seed errors (shared/research/seed_errors.md) --------------------------------------------------------------
@pytest.mark.parametrize("invented", [
    "ecs.gn6v-c4g1.2xlarge", "ecs.gn8i-vf8.2xlarge", "gpu.t4.xlarge", "ecs.gpu.t4.xlarge", "gn5e",
    "ecs.gn5e-c4g1.xlarge", "ecs.gn8i.2xlarge",
])
def test_invented_types_do_not_exist(cat: Catalog, invented: str) -> None:
    assert cat.instance(invented) is None
    assert not cat.is_known_type(invented)
    with pytest.raises(KnowledgeError):
        cat.require_instance(invented)


def test_invented_families_do_not_exist(cat: Catalog) -> None:
    for family in ("gn5e", "gn8i"):
        assert family not in cat.families
        assert not cat.types_in_family(family)
        assert cat.not_found(family) is not None
    assert "gn8t" in cat.families and cat.families["gn8t"].in_api_listing  # listed by the API since (issue 19)
    assert cat.not_found("gn8t") is None


def test_seed1_g7_large_has_no_gpu_and_t4_type_is_gn6i(cat: Catalog) -> None:
    assert cat.instance("ecs.g7.large") is None
    g7 = cat.cpu_instance("ecs.g7.large")
    assert g7 is not None and (g7.vcpu, g7.memory_gib) == (2, 8)
    t4 = cat.instance("ecs.gn6i-c4g1.xlarge")
    assert (t4.vcpu, t4.memory_gib, t4.gpu_id, t4.gpu_count, t4.gpu_memory_gb) == (4, 15, "T4", 1, 16)
    assert {t.family for t in cat.gpu_instance_types(gpu_id="T4")} == {"gn6i", "ebmgn6i", "vgn6i-vws"}


def test_seed2_seed8_gn7i_is_a10_24gb_only(cat: Catalog) -> None:
    types = cat.types_in_family("gn7i")
    assert types and {t.gpu_id for t in types} == {"A10"}
    assert all(t.gpu_memory_gb == 24 for t in types)
    t = cat.instance("ecs.gn7i-c8g1.2xlarge")
    assert (t.vcpu, t.memory_gib, t.gpu_count) == (8, 30, 1)
    assert cat.gpu_of(t).memory_gb == 24


def test_seed3_v100_families(cat: Catalog) -> None:
    assert {t.gpu_id for t in cat.types_in_family("gn6v")} == {"V100-SXM2-16GB"}
    assert {t.gpu_id for t in cat.types_in_family("gn6e")} == {"V100-SXM2-32GB"}
    assert cat.families["gn6v"].nvlink and cat.instance("ecs.gn6v-c8g1.16xlarge").nvlink


def test_seed4_gn7i_has_no_rdma(cat: Catalog) -> None:
    assert all(t.rdma == "none" and not t.has_rdma for t in cat.types_in_family("gn7i"))
    rdma_families = {t.family for t in cat.gpu_instance_types(rdma=True)}
    assert "gn7i" not in rdma_families
    assert {"ebmgn7ix", "ebmgn7ex", "sccgn7ex", "gn8v", "ebmgn8v", "gn8is", "ebmgn8is", "ebmgn8ia"} <= rdma_families
    assert cat.instance("ecs.sccgn7ex.32xlarge").rdma == "roce"
    assert cat.instance("ecs.ebmgn7ix.32xlarge").rdma == "erdma"


def test_seed6_v100_one_gpu_type_and_gn5_families(cat: Catalog) -> None:
    t = cat.instance("ecs.gn6v-c8g1.2xlarge")
    assert (t.vcpu, t.memory_gib, t.gpu_count) == (8, 32, 1)
    assert min(cat.types_in_family("gn6v"), key=lambda x: x.gpu_count).type == "ecs.gn6v-c8g1.2xlarge"
    gn5i = cat.instance("ecs.gn5i-c4g1.xlarge")
    assert gn5i.gpu_id == "P4" and gn5i.gpu_memory_gb == 8 and gn5i.status == "not_recommended"
    assert {t.gpu_id for t in cat.types_in_family("gn5")} == {"P100"}
    assert all(t.status == "not_recommended" for t in cat.types_in_family("gn5"))
    assert cat.families["gn7s"].status == "not_recommended"


def test_seed5_seed10_no_a800_h800_h100_h20_anywhere(cat: Catalog) -> None:
    forbidden = re.compile(r"\b(H800|H100|H200|H20)\b", re.I)
    for gpu in cat.gpus.values():
        assert not forbidden.search(gpu.display_name), gpu.id
        assert not forbidden.search(gpu.id), gpu.id
    # A800 and A100 80 GB are named only where the API's GPUSpec names them (issue 19), never on gn7i
    for gpu in cat.gpus.values():
        if re.search(r"A800|A100 80", gpu.display_name):
            assert gpu.named_by_alibaba and gpu.api_gpu_spec in ("A800", "A100"), gpu.id
    assert {t.family for t in cat.instance_types.values() if t.gpu_id.startswith("A800")} == {"ebmgn7v", "ebmgn7vx"}
    assert all(t.gpu_id == "A10" for t in cat.types_in_family("gn7i"))
    gn8v = cat.gpus["GN8V-96GB-HBM3"]
    assert not gn8v.named_by_alibaba and "not named by Alibaba" in gn8v.display_name
    assert (gn8v.memory_gb, gn8v.memory_bandwidth_gb_s, gn8v.tflops("fp32")) == (96, 4000, 39.5)
    assert gn8v.supports_fp8 and gn8v.tflops("fp8") is None
    assert cat.instance("ecs.gn8is.2xlarge").gpu_id == "L20"


def test_unnamed_gpus_say_what_alibaba_states(cat: Catalog) -> None:
    for fam in ("gn7e", "ebmgn7e", "ebmgn7ex", "sccgn7ex"):
        assert cat.families[fam].gpu_id == "AMPERE-80GB"
        assert all(t.gpu_spec == "A100" for t in cat.types_in_family(fam))
    a80 = cat.gpus["AMPERE-80GB"]  # the API's GPUSpec names it (issue 19): A100 80 GB with datasheet figures
    assert a80.named_by_alibaba and a80.display_name == "NVIDIA A100 80 GB" and "not named" not in a80.display_name
    assert (a80.memory_gb, a80.tflops("bf16"), a80.memory_bandwidth_gb_s) == (80, 312, 1935)
    assert cat.gpus["BLACKWELL-72GB"].memory_gb == 72 and cat.gpus["BLACKWELL-48GB"].memory_gb == 48
    for gpu in cat.gpus.values():
        if not gpu.named_by_alibaba:
            assert "not named by Alibaba" in gpu.display_name and gpu.tflops_basis


def test_seed11_cpu_gpu_ratios_are_real(cat: Catalog) -> None:
    ratios = {t.type: t.vcpu / t.gpu_count for t in cat.instance_types.values() if t.gpu_count and not t.vgpu}
    assert ratios["ecs.gn6i-c4g1.xlarge"] == 4 and ratios["ecs.gn7i-c56g1.14xlarge"] == 56
    assert ratios["ecs.ebmgn8ia.64xlarge"] == 64


def test_vgpu_slices_are_fractions(cat: Catalog) -> None:
    slice_ = cat.instance("ecs.sgn7i-vws-m2.xlarge")
    assert slice_.vgpu and slice_.gpu_fraction == "1/12" and slice_.gpu_count == pytest.approx(0.0833)
    assert slice_.gpu_memory_gb == 2 and slice_.gpu_memory_total_gb == 2
    sgn8ia = cat.instance("ecs.sgn8ia-m8.4xlarge")
    assert sgn8ia.vgpu and sgn8ia.gpu_count is None and sgn8ia.gpu_count_note
    assert cat.gpu_instance_types(gpu_id="A10", include_vgpu=False)
    assert not any(t.vgpu for t in cat.gpu_instance_types(include_vgpu=False))


def test_statuses(cat: Catalog) -> None:
    assert {t.status for t in cat.types_in_family("gn9gc")} == {"preview"}
    assert cat.families["ebmgn9g"].status == "preview"
    for fam in ("gn8v", "gn8is", "ebmgn8v", "ebmgn8is", "ebmgn8ia"):
        assert cat.families[fam].status == "sales_only"
    assert cat.families["gn7i"].status == "current"
    assert all(t.bare_metal == t.family.startswith("ebm") for t in cat.instance_types.values())


# -- provenance --------------------------------------------------------------------------------------------
def _sourced_entries(cat: Catalog):
    yield from cat.gpus.values()
    yield from cat.families.values()
    yield from cat.families_not_found
    yield from cat.instance_types.values()
    yield from cat.prices
    yield from cat.cpu_families.values()
    yield from cat.cpu_instance_types.values()
    yield from cat.storage.values()
    yield from cat.essd_levels.values()
    yield from cat.platforms.values()
    for facts in cat.cost_levers.values():
        yield from facts
    yield cat.meta


def test_every_entry_has_source_and_as_of(cat: Catalog) -> None:
    for entry in _sourced_entries(cat):
        assert entry.source or entry.source_note, entry
        assert entry.as_of or entry.as_of_note, entry


def test_named_gpu_specs_cite_a_dated_source(cat: Catalog) -> None:
    for gpu_id in ("T4", "A10", "A30", "A100-40GB", "V100-SXM2-16GB", "V100-SXM2-32GB", "P100", "P4", "A16"):
        gpu = cat.gpus[gpu_id]
        assert gpu.named_by_alibaba and "NVIDIA" in gpu.source and gpu.as_of, gpu_id
    assert cat.gpus["A10"].tflops("bf16") == 125  # dense, not the 250 sparsity figure
    assert cat.gpus["A100-40GB"].tflops("fp16") == 312
    assert not cat.gpus["V100-SXM2-16GB"].supports_bf16 and not cat.gpus["T4"].supports_bf16
    assert cat.gpus["L20"].supports_fp8 and not cat.gpus["A10"].supports_fp8


# -- prices and regions ------------------------------------------------------------------------------------
def test_price_lookup_is_exact_region(cat: Catalog) -> None:
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou").price_per_hour == pytest.approx(9.5326)
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "mainland").region == "cn-hangzhou"
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "international").region == "ap-southeast-1"
    assert cat.price("ecs.gn7-c12g1.3xlarge", "cn-hangzhou") is None  # gn7: Beijing, Shanghai, Ulanqab; not Hangzhou
    assert cat.price("ecs.gn7-c12g1.3xlarge", "cn-shanghai").price_per_hour == pytest.approx(31.583333)
    assert cat.price("ecs.gn7e-c16g1.4xlarge", "cn-wulanchabu").price_per_hour == pytest.approx(31.267)  # < Hangzhou
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "eu-west-1") is None  # London: no GPU price in the snapshot
    assert cat.price("ecs.gn7e-c16g1.8xlarge", "eu-central-1") is None  # Frankfurt lists no gn7e price
    assert cat.price("ecs.gn7i-c8g1.2xlarge", "eu-central-1").price_per_hour == pytest.approx(18.496462)
    assert cat.price("ecs.gn8v.4xlarge", "cn-hangzhou") is None  # sales-only: no price in the snapshot
    priced = cat.gpu_instance_types(region="us-east-1")
    assert priced and all(cat.price(t.type, "us-east-1") for t in priced)


def test_is_mainland() -> None:
    assert is_mainland("cn-hangzhou") and is_mainland("cn-beijing") and is_mainland("mainland")
    assert not is_mainland("cn-hongkong") and not is_mainland("ap-southeast-1") and not is_mainland("us-east-1")
    assert not is_mainland("international")


def test_cost_levers_storage_platforms(cat: Catalog) -> None:
    assert any("up to 90%" in f.fact for f in cat.cost_levers["preemptible_spot"])
    assert any("Subscription instances are not part" in f.fact for f in cat.cost_levers["mixed_fleets"])
    assert cat.essd_levels["PL1"].performance(100) == (6800, 170)
    assert cat.essd_levels["PL0"].performance(40000 / 12) == (10000, 180)
    with pytest.raises(ValueError):
        cat.essd_levels["PL3"].performance(100)
    assert "SDWebUI" in cat.platforms["EAS"].details["serverless"]
    assert cat.platforms["Function_Compute_GPU"].kind == "serverless"
