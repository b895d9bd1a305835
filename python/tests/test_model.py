"""ae.Model against an independent float64 Llama forward written here with
numpy (RMSNorm, RoPE's rotate_half, grouped-query attention, the SiLU-gated
MLP, a causal softmax), on tiny checkpoints this file writes itself."""

import json
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import attention_explainer as ae

CLI = Path(__file__).resolve().parents[2] / "build/attn"
TINY = {"vocab_size": 259, "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 16,
        "rope_theta": 10000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "hidden_act": "silu"}
VARIANTS = {
    "grouped-query": ({}, "F32"),
    "multi-query, tied, rope_theta 500, F16": (
        {"num_key_value_heads": 1, "tie_word_embeddings": True, "rope_theta": 500.0}, "F16"),
    "multi-head, three layers": ({"num_key_value_heads": 4, "num_hidden_layers": 3}, "F32"),
}


def tiny_weights(config, seed=1):
    """Seeded weights as the checkpoint stores them ([out, in]), each a
    multiple of 1/1024 below 2 in size: exact in F16, F32 and float64."""
    rng = np.random.default_rng(seed)
    h, ff, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = h // config["num_attention_heads"] * config["num_key_value_heads"]
    tensors = {}

    def add(name, shape, low, high):
        tensors[name] = np.floor(rng.uniform(low, high, shape) * 1024) / 1024

    add("model.embed_tokens.weight", (vocab, h), -1, 1)
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        add(p + "input_layernorm.weight", (h,), 0.5, 1.5)
        add(p + "self_attn.q_proj.weight", (h, h), -1, 1)
        add(p + "self_attn.k_proj.weight", (kv, h), -1, 1)
        add(p + "self_attn.v_proj.weight", (kv, h), -0.5, 0.5)
        add(p + "self_attn.o_proj.weight", (h, h), -0.5, 0.5)
        add(p + "post_attention_layernorm.weight", (h,), 0.5, 1.5)
        add(p + "mlp.gate_proj.weight", (ff, h), -0.5, 0.5)
        add(p + "mlp.up_proj.weight", (ff, h), -0.5, 0.5)
        add(p + "mlp.down_proj.weight", (h, ff), -0.5, 0.5)
    add("model.norm.weight", (h,), 0.5, 1.5)
    if not config["tie_word_embeddings"]:
        add("lm_head.weight", (vocab, h), -1, 1)
    return tensors


def safetensors(tensors, dtype="F32"):
    """The safetensors file of these tensors: an 8-byte little-endian header
    length, the header as JSON, then each tensor's little-endian values."""
    numpy_type = {"F32": "<f4", "F16": "<f2"}[dtype]
    header, data, offset = {}, b"", 0
    for name, values in tensors.items():
        raw = values.astype(numpy_type).tobytes()
        header[name] = {"dtype": dtype, "shape": list(values.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def files(config, tensors, dtype="F32"):
    return {"config.json": json.dumps(config).encode(), "model.safetensors": safetensors(tensors, dtype)}


def write_folder(folder, model_files):
    folder.mkdir(exist_ok=True)
    for name, data in model_files.items():
        (folder / name).write_bytes(data)
    return folder


def rms_norm(x, weight, eps):
    return weight * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def rope(x, theta):
    """x [n, heads, d] turned as modeling_llama.py does: x cos + rotate_half(x) sin."""
    n, _, d = x.shape
    angles = np.arange(n)[:, None] * theta ** (-np.arange(0, d, 2) / d)[None, :]
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1)[:, None, :]
    rotated = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * cos + rotated * sin


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def llama_forward(config, tensors, ids):
    """(attention [layer, head, query, key], logits [position, vocab]) in float64."""
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    d = config["hidden_size"] // heads
    eps, n = config["rms_norm_eps"], len(ids)
    x = tensors["model.embed_tokens.weight"][ids]
    causal = np.triu(np.ones((n, n), dtype=bool), 1)
    attention = []
    for layer in range(config["num_hidden_layers"]):
        w = {name[len(f"model.layers.{layer}."):]: value for name, value in tensors.items()
             if name.startswith(f"model.layers.{layer}.")}
        h = rms_norm(x, w["input_layernorm.weight"], eps)
        q = rope((h @ w["self_attn.q_proj.weight"].T).reshape(n, heads, d), config["rope_theta"])
        k = rope((h @ w["self_attn.k_proj.weight"].T).reshape(n, kv_heads, d), config["rope_theta"])
        v = (h @ w["self_attn.v_proj.weight"].T).reshape(n, kv_heads, d)
        group = heads // kv_heads
        weights, outputs = [], []
        for head in range(heads):
            scores = q[:, head] @ k[:, head // group].T / np.sqrt(d)
            scores[causal] = -np.inf
            weights.append(softmax(scores))
            outputs.append(weights[-1] @ v[:, head // group])
        attention.append(weights)
        x = x + np.concatenate(outputs, axis=-1) @ w["self_attn.o_proj.weight"].T
        h = rms_norm(x, w["post_attention_layernorm.weight"], eps)
        gate = h @ w["mlp.gate_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ w["mlp.up_proj.weight"].T)) @ w["mlp.down_proj.weight"].T
    head_weights = tensors["model.embed_tokens.weight" if config["tie_word_embeddings"] else "lm_head.weight"]
    return np.array(attention), rms_norm(x, tensors["model.norm.weight"], eps) @ head_weights.T


def splitmix64(state):
    """(the next state, its draw): the generator docs/models.md names."""
    mask = 2**64 - 1
    state = (state + 0x9E3779B97F4A7C15) & mask
    z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return state, z ^ (z >> 31)


def sample(logits, temperature, state):
    """(the id drawn from softmax(logits / T) by docs/models.md's rule, the next state)."""
    state, draw = splitmix64(state)
    weights = np.exp((logits - logits.max()) / temperature)
    return int(np.argmax(np.cumsum(weights) > (draw >> 11) * 2.0**-53 * weights.sum())), state


@pytest.fixture(scope="module", params=list(VARIANTS), ids=list(VARIANTS))
def variant(request):
    changes, dtype = VARIANTS[request.param]
    config = {**TINY, **changes}
    tensors = tiny_weights(config)
    return config, tensors, ae.Model(files(config, tensors, dtype))


def test_a_run_gives_the_attention_and_logits_of_a_float64_llama_forward_computed_here(variant):
    config, tensors, model = variant
    result = model.run(text="The cat sat")
    attention, logits = llama_forward(config, tensors, list(b"The cat sat"))
    assert result["ids"].tolist() == list(b"The cat sat")
    assert result["attention"].shape == (config["num_hidden_layers"], config["num_attention_heads"], 11, 11)
    np.testing.assert_allclose(result["attention"], attention, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result["logits"], logits, rtol=1e-12, atol=1e-12)


def test_the_config_holds_the_checkpoints_llama_config_names(variant):
    config, _, model = variant
    assert model.config == {name: config[name] for name in model.config}
    assert set(model.config) == set(TINY) - {"hidden_act"}


def test_greedy_generation_takes_the_reference_models_highest_logit_with_and_without_the_cache(variant):
    config, tensors, model = variant
    ids = list(b"ab")
    for _ in range(8):
        ids.append(int(np.argmax(llama_forward(config, tensors, ids)[1][-1])))
    assert model.generate(ids=[97, 98], tokens=8).tolist() == ids
    assert model.generate(ids=[97, 98], tokens=8, cache=False).tolist() == ids


def test_sampled_generation_draws_by_the_documented_rule_from_the_reference_logits_with_and_without_the_cache(
        variant):
    config, tensors, model = variant
    ids, state = list(b"a"), 5
    for _ in range(12):
        token, state = sample(llama_forward(config, tensors, ids)[1][-1], 1.5, state)
        ids.append(token)
    assert model.generate(text="a", tokens=12, temperature=1.5, seed=5).tolist() == ids
    assert model.generate(text="a", tokens=12, temperature=1.5, seed=5, cache=False).tolist() == ids
    assert model.generate(text="a", tokens=12, temperature=1.5, seed=6).tolist() != ids


def test_greedy_generation_breaks_a_tie_towards_the_lowest_id():
    # The final norm keeps one component and lm_head rows 1, 2 read it with
    # +1, rows 3, 4 with -1, the rest 0: whatever its sign, two ids tie.
    tensors = tiny_weights(TINY)
    tensors["model.norm.weight"] = np.eye(TINY["hidden_size"])[0]
    tensors["lm_head.weight"] = np.zeros((TINY["vocab_size"], TINY["hidden_size"]))
    tensors["lm_head.weight"][[1, 2, 3, 4], 0] = [1, 1, -1, -1]
    logits = llama_forward(TINY, tensors, list(b"xyz"))[1][-1]
    tied = [1, 2] if logits[1] > 0 else [3, 4]
    assert logits[tied[0]] == logits[tied[1]] == logits.max()
    model = ae.Model(files(TINY, tensors))
    assert model.generate(text="xyz", tokens=1).tolist() == [*b"xyz", tied[0]]
    assert model.generate(text="xyz", tokens=1, cache=False).tolist() == [*b"xyz", tied[0]]


def test_a_folder_and_its_files_bytes_give_the_same_model(tmp_path):
    model_files = files(TINY, tiny_weights(TINY))
    from_folder = ae.Model(write_folder(tmp_path / "tiny", model_files))
    from_bytes = ae.Model(model_files)
    folder_run, bytes_run = from_folder.run(text="Hello"), from_bytes.run(text="Hello")
    for name in ("ids", "attention", "logits"):
        np.testing.assert_array_equal(folder_run[name], bytes_run[name])
    assert from_folder.generate(text="He", tokens=5).tolist() == from_bytes.generate(text="He", tokens=5).tolist()
    np.testing.assert_array_equal(from_bytes.run(ids=np.frombuffer(b"Hello", np.uint8))["logits"], bytes_run["logits"])


def test_a_heads_queries_keys_and_values_give_the_runs_weights_for_that_head():
    model = ae.Model(files(TINY, tiny_weights(TINY)))
    head = model.head(1, 3, text="a cat")
    assert head["q"].shape == head["k"].shape == head["v"].shape == (5, 2)
    weights = ae.sdpa(head["q"], head["k"], head["v"], mask="causal")["weights"]
    np.testing.assert_array_equal(weights, model.run(text="a cat")["attention"][1, 3])


@pytest.mark.skipif(not CLI.exists(), reason="make build/attn first")
@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "steps"])
def test_a_heads_walkthrough_is_what_attn_model_run_prints_for_that_head(tmp_path, fmt):
    folder = write_folder(tmp_path / "tiny", files(TINY, tiny_weights(TINY)))
    text = "a cat\n\x01\u00e9"
    printed = subprocess.run([str(CLI), "model", "run", "--model", str(folder), "--text", text, "--layer", "1",
                              "--head", "3", "--format", fmt], capture_output=True, text=True, check=True).stdout
    walkthrough = ae.Model(folder).walkthrough(1, 3, text=text, fmt=fmt)
    assert walkthrough == (json.loads(printed) if fmt == "steps" else printed)


def test_a_missing_folder_raises_the_engines_message(tmp_path):
    with pytest.raises(ae.AttentionError) as error:
        ae.Model(tmp_path / "nowhere")
    assert error.value.status == 10
    assert "nowhere" in str(error.value) and "config.json" in str(error.value)


def test_a_cut_file_a_huge_header_length_and_a_bad_config_raise_the_engines_messages():
    model_files = files(TINY, tiny_weights(TINY))
    weights = model_files["model.safetensors"]
    cases = [({"model.safetensors": weights[:len(weights) // 2]}, 18, "are not within the"),
             ({"model.safetensors": b"\xff" * 8 + weights[8:]}, 18,
              "the header says it has 18446744073709551615 bytes"),
             ({"config.json": json.dumps({**TINY, "num_key_value_heads": 3}).encode()}, 13,
              "config.json: num_key_value_heads 3 does not divide num_attention_heads 4")]
    for change, status, message in cases:
        with pytest.raises(ae.AttentionError, match=message) as error:
            ae.Model({**model_files, **change})
        assert error.value.status == status


def test_an_id_outside_the_vocabulary_raises_the_engines_message():
    model = ae.Model(files(TINY, tiny_weights(TINY)))
    message = re.escape("token 259 (at 1) is not an id of this model, whose ids are 0 to vocab_size - 1 = 258")
    with pytest.raises(ae.AttentionError, match=message) as error:
        model.run(ids=[1, 259])
    assert error.value.status == 17
    with pytest.raises(ae.AttentionError, match=message):
        model.generate(ids=[1, 259], tokens=2)


def test_too_many_tokens_raise_the_engines_message_before_anything_is_computed():
    model = ae.Model(files(TINY, tiny_weights(TINY)))
    with pytest.raises(ae.AttentionError, match="at most max_position_embeddings = 16 tokens, got 17") as error:
        model.run(ids=[1] * 17)
    assert error.value.status == 15
    with pytest.raises(ae.AttentionError, match="the prompt's 10 and 7 generated would be more"):
        model.generate(ids=[1] * 10, tokens=7)
    with pytest.raises(ae.AttentionError, match="at least one token"):
        model.run(text="")


def test_a_model_over_max_bytes_is_refused_with_both_numbers():
    with pytest.raises(ae.AttentionError, match=r"more than its limit of 1000 bytes; raise the limit "
                                                r"\(max_bytes in Python\)") as error:
        ae.Model(files(TINY, tiny_weights(TINY)), max_bytes=1000)
    assert error.value.status == 12


def test_a_run_whose_weights_and_logits_exceed_max_bytes_is_refused_before_it_runs():
    config = {**TINY, "max_position_embeddings": 64}
    model = ae.Model(files(config, tiny_weights(config)), max_bytes=300_000)
    assert model.run(ids=[1] * 8)["logits"].shape == (8, 259)
    # 2 layers × 4 heads × 64² weights and 64 × 259 logits, 8 bytes each
    message = "the attention weights and logits of 64 tokens take 394752 bytes, more than max_bytes 300000"
    with pytest.raises(ae.AttentionError, match=message) as error:
        model.run(ids=[1] * 64)
    assert error.value.status == 12
