"""Record the GPU rows of Alibaba's DescribeInstanceTypes listing from a SpareCores/sc-data-dumps checkout.

    python tools/record_api_listing.py --git-dir /path/to/sc-data-dumps/.git --commit e8749bef...

writes tools/data/alicloud_gpu_instance_types.json: one row per NVIDIA GPU instance type (families ecs.gn*,
ebmgn*, sccgn*, sgn*, vgn*, cgn*) with the fields the importer uses, plus the provenance of the crawl. The crawl
is SpareCores' normalised copy of the API's answer (sc-crawler, vendors/_alicloud.py), not the raw body: GPUSpec
reaches it through sc-crawler's _standardize_gpu_model, which drops a vendor prefix ("NVIDIA ") and a memory
suffix (" 80G"); GPUMemorySize (GiB per GPU) is stored in MiB; InstanceBandwidthRx is stored as Gbit/s. EriQuantity
is not part of the crawl. Data licence: CC BY-SA 4.0 (SpareCores).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tools" / "data" / "alicloud_gpu_instance_types.json"
FAMILY = re.compile(r"^ecs\.(ebmgn|sccgn|sgn|vgn|cgn|gn)\d")
PATH = "data/server/alicloud"


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                          text=True).stdout


def row(raw: dict) -> dict:
    mem = raw.get("gpu_memory_min")
    return {"type": raw["server_id"], "family": raw["family"], "vcpu": raw["vcpus"],
            "memory_gib": raw["memory_amount"] / 1024, "gpu_count": raw["gpu_count"],
            "gpu_memory_gib": None if not mem else mem / 1024, "gpu_spec": raw.get("gpu_model"),
            "network_gbit_s": raw.get("network_speed"), "crawl_status": raw.get("status")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    commit = _git(args.git_dir, "rev-parse", args.commit).strip()
    date = _git(args.git_dir, "show", "-s", "--format=%cs", commit).strip()
    rows = []
    for name in _git(args.git_dir, "ls-tree", "--name-only", f"{commit}:{PATH}").split():
        raw = json.loads(_git(args.git_dir, "show", f"{commit}:{PATH}/{name}"))
        if (raw.get("gpu_count") or 0) > 0 and FAMILY.match(raw["family"]):
            rows.append(row(raw))
    rows.sort(key=lambda r: r["type"])
    doc = {"provenance": {
        "repo": "https://github.com/SpareCores/sc-data-dumps", "path": f"{PATH}/*.json", "commit": commit,
        "date": date, "licence": "CC BY-SA 4.0",
        "what": ("Alibaba Cloud ECS DescribeInstanceTypes (API 2014-05-26) as crawled and normalised by "
                 "SpareCores sc-crawler; GPU rows of NVIDIA GPU families only"),
        "fields": {"gpu_spec": "GPUSpec after sc-crawler's _standardize_gpu_model (vendor prefix and memory "
                               "suffix such as ' 80G' dropped; fraction suffix such as '*1/4' dropped)",
                   "gpu_memory_gib": "GPUMemorySize, GiB per GPU (null: the API states none)",
                   "network_gbit_s": "InstanceBandwidthRx in Gbit/s (sc-crawler: /1024/1000)",
                   "gpu_count": "GPUAmount (sc-crawler writes 1 for a vGPU slice)",
                   "crawl_status": "ACTIVE: DescribeAvailableResource showed it available in at least one zone",
                   "EriQuantity": "not in the crawl"}},
        "instance_types": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(rows)} GPU instance types from {commit[:8]} ({date})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
