"""Dense peak TFLOPS of GPUs that appear in the published benchmarks but are NOT Alibaba catalog GPUs.

Benchmark-only: never copy these into knowledge/catalog. Figures are dense (non-sparse) Tensor-Core peaks with
FP32 accumulate, from the vendor documents named in `source`.
"""

from __future__ import annotations

BENCH_GPUS: dict[str, dict[str, object]] = {
    "A100": {"bf16": 312.0, "bandwidth_gb_s": 2039.0,
             "source": "NVIDIA A100 Tensor Core GPU datasheet (BF16 Tensor Core 312 TFLOPS dense, 624 with sparsity; "
             "same for 40 GB / 80 GB, PCIe / SXM; memory bandwidth 2,039 GB/s for 80 GB SXM: every torchtune A100 row "
             "peaks above 40 GB or shards a 70B+ model over 8, so 80 GB)"},
    "H100": {"bf16": 989.4, "bandwidth_gb_s": 3350.0, "source": "NVIDIA H100 Tensor Core GPU datasheet, SXM column (BF16 1,979 TFLOPS with "
             "sparsity, i.e. 989.4 dense; 3.35 TB/s)"},
    "4090": {"bf16": 165.2, "bandwidth_gb_s": 1008.0,
             "source": "NVIDIA Ada Lovelace GPU Architecture whitepaper, Appendix A, GeForce RTX 4090: peak BF16 Tensor "
             "TFLOPS with FP32 accumulate 165.2 (330.4 with sparsity); memory bandwidth 1,008 GB/s"},
    "A6000": {"bf16": 154.8, "bandwidth_gb_s": 768.0,
              "source": "NVIDIA Ampere GA102 GPU Architecture whitepaper, NVIDIA RTX A6000: peak FP16/BF16 Tensor TFLOPS "
              "with FP32 accumulate 154.8 (309.7 with sparsity, as on the RTX A6000 datasheet); memory bandwidth 768 GB/s"},
}
UNMAPPED = {
    "A10G": "AWS A10G: NVIDIA publishes no A10G datasheet with Tensor-Core figures; not the catalog's A10",
    "NVIDIA L40S": "no tokens/s in these rows",
}

# Serving bench (bench/serve_throughput_accuracy.py): HBM bandwidth (GB/s), NVLink total (GB/s, both directions; a ring
# uses half per direction) and dense Tensor-Core peaks (TFLOPS) of the GPUs the published serving rows ran on.
SERVING_GPUS: dict[str, dict[str, object]] = {
    "A100-SXM-80GB": {"bw": 2039.0, "nvlink": 600.0, "bf16": 312.0, "fp8": None,
                      "source": "NVIDIA A100 Tensor Core GPU datasheet: A100 80GB SXM 2,039 GB/s HBM2e, NVLink 600 GB/s, "
                                "BF16 312 TFLOPS dense"},
    "H100-SXM-80GB": {"bw": 3350.0, "nvlink": 900.0, "bf16": 989.4, "fp8": 1978.9,
                      "source": "NVIDIA H100 Tensor Core GPU datasheet, SXM column: 3.35 TB/s, NVLink 900 GB/s, BF16 1,979 "
                                "and FP8 3,958 TFLOPS with sparsity (half dense)"},
    "H200-SXM-141GB": {"bw": 4800.0, "nvlink": 900.0, "bf16": 989.4, "fp8": 1978.9,
                       "source": "NVIDIA H200 Tensor Core GPU datasheet, SXM column: 4.8 TB/s, NVLink 900 GB/s, same "
                                 "Tensor-Core peaks as H100 SXM"},
}
