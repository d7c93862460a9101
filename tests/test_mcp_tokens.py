"""What an assistant pays to use the server, in tokens of the o200k encoding (bpe-openai ships it; no download):
tools/list at most 5,000 tokens; each default recommend_gpu_config / ask answer at most 1,500 tokens of text and
structured content together; detail="full" still returns the whole Recommendation."""

import json

import pytest

from gpu_advisor.server.app import build_server
from one_language import one_language

bpe_openai = pytest.importorskip("bpe_openai", reason="bpe-openai (the dev extra) counts o200k tokens offline")

pytestmark = pytest.mark.anyio

TOOLS_LIST_MAX = 5000
ANSWER_MAX = 1500

# Representative calls: CV and LLM training, fine-tuning, serving, preprocessing, a multi-GPU job, a question that
# names no model (scenario table), both languages.
CALLS = [
    ("recommend_gpu_config", {"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "lora", "lang": "en"}),
    ("recommend_gpu_config", {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024],
                              "batch_size_per_gpu": 8, "lang": "zh"}),
    ("recommend_gpu_config", {"task": "llm_pretrain", "model": "Llama 3.1 70B", "lang": "en"}),
    ("recommend_gpu_config", {"task": "inference", "model": "Qwen2.5 7B", "seq_len": 8192, "lang": "zh"}),
    ("recommend_gpu_config", {"task": "object_detection", "model": "Mask R-CNN", "num_gpus": 8, "lang": "en"}),
    ("recommend_gpu_config", {"task": "llm_finetune", "model": "Qwen2.5 72B", "finetune_method": "qlora",
                              "region": "ap-southeast-1", "interruptible": True, "lang": "en"}),
    ("recommend_gpu_config", {"task": "preprocessing", "dataset_size_gb": 5000, "lang": "zh"}),
    ("ask", {"question": "在阿里云上训练语义分割模型需要多大的GPU和内存？"}),
    ("ask", {"question": "Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16"}),
    ("ask", {"question": "部署 Qwen2.5 72B 推理服务，int4 量化，需要几张卡？"}),
    # a decoder LLM's serving speed leads (tokens/s, TTFT, requests/s): still compact
    ("ask", {"question": "Serve Qwen2.5-72B-Instruct with vLLM for about 50 concurrent users, average prompt 2k tokens, "
                         "output 500 tokens"}),
    ("ask", {"question": "Serve Llama 3.1 8B Instruct at 20 requests per second, input 1000 tokens and output 200 tokens"}),
    # many parser notes (two families, each read as its GPU) and a long comparison lead: 1,713 and 1,508 tokens before
    # the ask tool's own lines counted against the budget (h13-desk)
    ("ask", {"question": "gn8is 和 gn7e 哪个适合训练？"}),
    ("ask", {"question": "A10 和 L20 差别大吗？部署 Qwen2.5-14B 用哪个？"}),
    # the user's own cards: the fit and the time on them, then the cloud option (the longest lead the advisor writes)
    ("ask", {"question": "我想用两张4090微调Qwen3-8B，LoRA，多久能训完10万条数据？"}),
    ("ask", {"question": "I rent 4x RTX 4090 elsewhere, how long would LoRA fine-tuning Qwen2.5-32B on 30k samples take?"}),
    # a lead of four lines (method not stated, DPO, default precision, what pure bf16 changes) under a long unused note:
    # 1,585 tokens before brief.fit_budget's last-resort trims (h13-fresh)
    ("ask", {"question": "DPO 训练 Qwen2.5-7B-Instruct，偏好数据 2 万对，预算每小时 100 元以内，推荐什么配置？"}),
    ("ask", {"question": "我们要上线一个7B的客服模型，QPS大概10，延迟要求首字500ms以内，用 Qwen2.5-7B，选 A10 还是 L20？"}),
    # lead lines said for a derived rate or length: a daily count's average, an assumed output, characters as tokens
    ("ask", {"question": "GLM-4-9B 推理服务 每天 100 万次调用"}),
    ("ask", {"question": "部署 Qwen2.5-7B-Instruct，每秒 30 个请求，回答平均 300 字，需要什么配置"}),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def encoding():
    return bpe_openai.get_encoding("o200k_base")


@pytest.fixture(scope="module")
def server():
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield build_server()
    root.handlers[:] = handlers
    root.setLevel(level)


def wire(data) -> str:
    """JSON as the server writes it (compact, UTF-8)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


async def test_tools_list_fits_in_5k_tokens(server, encoding) -> None:
    from mcp import Client

    async with Client(server) as client:
        listed = await client.list_tools()
    tokens = len(encoding.encode(wire(listed.model_dump(mode="json", by_alias=True, exclude_none=True))))
    print(f"tools/list: {tokens} tokens")
    assert tokens <= TOOLS_LIST_MAX, tokens


async def test_default_answers_fit_in_1_5k_tokens_and_full_has_everything(server, encoding) -> None:
    from jsonschema import Draft202012Validator
    from mcp import Client

    from gpu_advisor import recommend
    from gpu_advisor.ask import answer_question

    sizes = []
    async with Client(server) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            assert not result.is_error, (name, args, result.content[0].text)
            Draft202012Validator(schemas[name]).validate(result.structured_content)
            text, structured = result.content[0].text, wire(result.structured_content)
            tokens = len(encoding.encode(text)) + len(encoding.encode(structured))
            sizes.append(tokens)
            assert tokens <= ANSWER_MAX, (name, args, tokens)
            full = await client.call_tool(name, {**args, "detail": "full"})
            Draft202012Validator(schemas[name]).validate(full.structured_content)
            if name == "ask":
                rec = answer_question(args["question"])[1]
                got = full.structured_content["recommendation"]["full"]
            else:
                rec = recommend(args, lang=args["lang"])
                got = full.structured_content["full"]
            assert got == one_language(rec.model_dump(mode="json"), rec.lang), (name, args)
            assert len(encoding.encode(full.content[0].text)) > len(encoding.encode(text))
    print("default answers, tokens (text + structured):", sizes)
