"""The answer's language follows the words that carry the sentence: a hyphenated model name is one word, a size
suffix ("8B") is no English word (engine/ask/parser.detect_lang)."""

import pytest

from gpu_advisor.ask.parser import detect_lang


@pytest.mark.parametrize("text, lang", [
    ("用GRPO训练DeepSeek-R1-Distill-Qwen-7B", "zh"),          # was en: the name's five parts outweighed 用 / 训练
    ("部署 Qwen2.5-72B-Instruct-AWQ 要几张卡", "zh"),
    ("用A10跑Llama 3 8B", "zh"),
    ("8B模型推理", "zh"),
    ("训练 Llama", "zh"),
    ("Fine-tune Llama-3.1-8B-Instruct in 杭州", "en"),
    ("Train YOLOv8 in 杭州", "en"),
    ("Serve 7B on A10 in 北京", "en"),
    ("How much memory for Qwen2.5-7B?", "en"),
])
def test_language_of_the_question(text: str, lang: str) -> None:
    assert detect_lang(text) == lang
