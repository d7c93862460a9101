# The two commands of the README's quick start: `make demo` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
# the interpreter .venv is built with: a distribution's CPython 3.12 / 3.11 first (PGO + LTO), see the script
PYTHON ?= $(shell tools/pick_python.sh)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench bench-memory bench-speed bench-instructions bench-answers docs check-docs tool-schemas lint clean

$(STAMP): pyproject.toml tools/pick_python.sh
	@test -n "$(PYTHON)" || { echo "gpu-advisor needs CPython 3.11 or 3.12 with venv and its headers (durable-rules does not import on 3.13; on Debian: apt install python3-venv python3-dev)"; exit 1; }
	@echo "building $(VENV) with $(PYTHON) ($$($(PYTHON) -c 'import sys; print(sys.version.split()[0])'))"
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== 在阿里云上训练语义分割模型需要多大的GPU和内存？ (workload file: examples/seed_semseg.yaml) =="
	$(BIN)/gpu-advisor recommend --workload examples/seed_semseg.yaml --lang zh
	@echo
	@echo "== Cityscapes DeepLabV3+ R-50, 1024x1024, batch 8 (examples/cityscapes_deeplabv3plus.yaml) =="
	$(BIN)/gpu-advisor recommend --workload examples/cityscapes_deeplabv3plus.yaml --lang en

test: $(STAMP)
	$(BIN)/python -m pytest -q

docs: $(STAMP)
	$(BIN)/python tools/gen_rule_docs.py

check-docs: $(STAMP)
	$(BIN)/python tools/gen_rule_docs.py --check

# server/tools.json: what the MCP server publishes in tools/list, generated from server/tools.py
tool-schemas: $(STAMP)
	$(BIN)/python tools/gen_tool_schemas.py

bench-memory: $(STAMP)
	$(BIN)/python bench/memory_accuracy.py
	@echo
	@echo "== generalisation check: model-zoo rows outside the dev set, through gpu-advisor estimate --jsonl =="
	$(BIN)/python bench/zoo_check/run.py
	@echo
	@echo "== Ultralytics YOLO: public GPU_mem training logs (bench/data/ultralytics_gpu_mem.csv) =="
	$(BIN)/python bench/yolo_memory.py
	@echo
	@echo "== vision training time: NVIDIA DeepLearningExamples img/s (bench/data/dle_vision_train_throughput.csv) =="
	$(BIN)/python bench/vision_time_accuracy.py
	@echo
	@echo "== LLM serving speed: LMDeploy / vLLM / NIM published rows (bench/data/llm_serving_measured.csv) =="
	$(BIN)/python bench/serve_throughput_accuracy.py

bench: bench-memory
	$(BIN)/python bench/run_all.py

# the end-to-end evaluation set (tests/answers/cases.yaml) by category: understood / sized / priced sensibly, and the
# question parser's ms per 1,000 characters
bench-answers: $(STAMP)
	$(BIN)/python bench/answers.py

# instructions per answer under valgrind: figures that do not drift with the VM's speed (about 13 minutes)
bench-instructions: $(STAMP)
	$(BIN)/python bench/instructions.py

clean:
	rm -rf $(VENV) build dist *.egg-info bench/out
