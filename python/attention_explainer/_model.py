"""A language model through ctypes: the attn_model_* object of src/lm/.

The library loads the checkpoint (a folder, or its two files' bytes),
checks every size against the file and the byte limit, and computes in
float64; this module passes ids in and hands back the arrays it filled.
"""

import ctypes
import json
import numbers
import os

import numpy as np

from ._engine import (ATTN_ERR_INPUT, ATTN_ERR_OPTION, ATTN_ERR_RANGE, ATTN_ERR_TOO_LARGE, ATTN_OK, AttentionError,
                      _max_bytes, c_text, formats, formatted, library)

_C_INT = 2**31
# The C message names the command line's option for the limit; Python's is
# max_bytes.
_OTHER_LIMIT_OPTION = "--max-bytes in attn model"


class _Config(ctypes.Structure):
    """attn_decoder_config (src/attention.h), LlamaConfig's names."""

    _fields_ = [("vocab_size", ctypes.c_int), ("hidden_size", ctypes.c_int), ("intermediate_size", ctypes.c_int),
                ("num_hidden_layers", ctypes.c_int), ("num_attention_heads", ctypes.c_int),
                ("num_key_value_heads", ctypes.c_int), ("max_position_embeddings", ctypes.c_int),
                ("rope_theta", ctypes.c_double), ("rms_norm_eps", ctypes.c_double),
                ("tie_word_embeddings", ctypes.c_int)]


def _model_library():
    lib = library()
    if not hasattr(lib, "_model_signatures"):
        p, c_str, c_int = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        doubles, ints = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int)
        signatures = {
            "attn_model_create": (c_int, [ctypes.POINTER(p), p]),
            "attn_model_destroy": (None, [p]),
            "attn_model_set_max_bytes": (c_int, [p, ctypes.c_size_t]),
            "attn_model_error": (c_str, [p]),
            "attn_model_load": (c_int, [p, c_str, ctypes.c_size_t, c_str, ctypes.c_size_t]),
            "attn_model_load_folder": (c_int, [p, c_str]),
            "attn_model_config": (ctypes.POINTER(_Config), [p]),
            "attn_model_run": (c_int, [p, doubles, doubles, ints, c_int]),
            "attn_model_head": (c_int, [p, doubles, doubles, doubles, ints, c_int, c_int, c_int]),
            "attn_model_head_problem": (c_int, [p, ctypes.POINTER(p), ints, c_int, c_int, c_int]),
            "attn_model_generate": (c_int, [p, ints, ints, c_int, c_int, ctypes.c_double, ctypes.c_uint64, c_int]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        lib._model_signatures = True
    return lib


def _whole(value, what, low, high):
    """value as a Python int from low to high (ctypes would wrap one outside)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or not low <= value <= high:
        raise AttentionError(ATTN_ERR_RANGE, f"{what}: expected a whole number from {low} to {high}, "
                                             f"got {value!r:.40}")
    return int(value)


def _file_bytes(files, name):
    data = files.get(name)
    if isinstance(data, str):
        data = data.encode()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise AttentionError(ATTN_ERR_INPUT, f"{name}: expected the file's bytes, got {type(data).__name__}")
    return bytes(data)


class Model:
    """A Llama-architecture checkpoint, run exactly in float64.

    source: a folder holding config.json and model.safetensors, or those two
    files' bytes as a dict {"config.json": ..., "model.safetensors": ...}.
    max_bytes: the most bytes the model may hold at once (its weights, the
    file while it is read, the key/value cache and work memory; 256 MiB
    unless given), and the most that run's attention weights and logits
    may take.
    """

    def __init__(self, source, max_bytes=256 * 1024 * 1024):
        self._lib = _model_library()
        self.max_bytes = _max_bytes(max_bytes)
        self._handle = ctypes.c_void_p()
        self._check(self._lib.attn_model_create(ctypes.byref(self._handle), None))
        self._check(self._lib.attn_model_set_max_bytes(self._handle, self.max_bytes))
        if isinstance(source, dict):
            config = _file_bytes(source, "config.json")
            weights = _file_bytes(source, "model.safetensors")
            self._check(self._lib.attn_model_load(self._handle, config, len(config), weights, len(weights)))
        elif isinstance(source, (str, os.PathLike)):
            self._check(self._lib.attn_model_load_folder(self._handle, c_text(os.fspath(source), "folder")))
        else:
            raise AttentionError(ATTN_ERR_INPUT, f"expected a model folder or a dict of its two files' bytes "
                                                 f"(config.json, model.safetensors), got {type(source).__name__}")
        c = self._lib.attn_model_config(self._handle).contents
        self.config = {name: getattr(c, name) for name, _ in _Config._fields_}
        self.config["tie_word_embeddings"] = bool(c.tie_word_embeddings)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.attn_model_destroy(handle)

    def _check(self, status):
        if status != ATTN_OK:
            message = self._lib.attn_model_error(self._handle).decode() if self._handle else ""
            if status == ATTN_ERR_TOO_LARGE:
                message = message.replace(_OTHER_LIMIT_OPTION, "max_bytes in Python")
            raise AttentionError(status, message or self._lib.attn_status_text(status).decode())

    def _ids(self, text, ids):
        """The tokens as a C int array: text's UTF-8 bytes (a byte's id is its
        value, no beginning-of-text token added) or the ids given."""
        if (text is None) == (ids is None):
            raise AttentionError(ATTN_ERR_INPUT, "give the text as text=... or its ids as ids=..., one of them")
        if text is not None:
            tokens = list(c_text(text, "text"))
        else:
            if isinstance(ids, (str, bytes)) or np.ndim(ids) != 1:
                raise AttentionError(ATTN_ERR_INPUT, f"ids: expected a list of token ids, got {ids!r:.40}")
            tokens = [_whole(token, f"ids[{i}]", -_C_INT, _C_INT - 1) for i, token in enumerate(ids)]
        return (ctypes.c_int * max(len(tokens), 1))(*tokens), len(tokens)

    def _positions(self, n, more=0):
        """Whether n tokens and `more` after them fit in the model. When not,
        the call goes to the library without room for outputs: it refuses the
        tokens with its own message before it writes anything."""
        return 1 <= n <= n + more <= self.config["max_position_embeddings"]

    def run(self, text=None, ids=None):
        """The text's (or ids') run from an empty cache: ids, attention
        [layer][head][query][key] (0 after the query) and logits
        [position][vocab], as float64 arrays the library filled."""
        tokens, n = self._ids(text, ids)
        c = self.config
        if not self._positions(n):
            self._check(self._lib.attn_model_run(self._handle, None, None, tokens, n))
        shape = (c["num_hidden_layers"], c["num_attention_heads"], n, n)
        cells = int(np.prod(shape)) + n * c["vocab_size"]
        if cells * 8 > self.max_bytes:
            raise AttentionError(ATTN_ERR_TOO_LARGE, f"the attention weights and logits of {n} tokens take "
                                                     f"{cells * 8} bytes, more than max_bytes {self.max_bytes}")
        attention = np.empty(shape)
        logits = np.empty((n, c["vocab_size"]))
        self._check(self._lib.attn_model_run(self._handle, _doubles(attention), _doubles(logits), tokens, n))
        return {"ids": np.array(tokens[:n]), "attention": attention, "logits": logits}

    def generate(self, text=None, ids=None, *, tokens, temperature=0, seed=0, cache=True):
        """The prompt's ids then `tokens` generated ones: greedy at
        temperature 0 (ties to the lowest id), else sampled with the seed;
        the same ids with cache=False, which runs the whole text each time."""
        prompt, n = self._ids(text, ids)
        count = _whole(tokens, "tokens", 0, _C_INT - 1)
        seed = _whole(seed, "seed", 0, 2**64 - 1)
        if isinstance(temperature, bool) or not isinstance(temperature, (numbers.Real, np.floating, np.integer)):
            raise AttentionError(ATTN_ERR_RANGE, f"temperature: expected a number, got {temperature!r:.40}")
        fits = self._positions(n, count)
        out = (ctypes.c_int * (n + count if fits else 1))()
        self._check(self._lib.attn_model_generate(self._handle, out, prompt, n, count, float(temperature), seed,
                                                  int(bool(cache))))
        return np.array(out[:n + count])

    def head(self, layer, head, text=None, ids=None):
        """What head `head` of layer `layer` attends with on the text: q and k
        after the rotary embedding, v of the key/value head it reads, each
        [position][head_dim]."""
        tokens, n = self._ids(text, ids)
        layer = _whole(layer, "layer", -_C_INT, _C_INT - 1)
        head = _whole(head, "head", -_C_INT, _C_INT - 1)
        c = self.config
        rows = n if self._positions(n) else 0
        q, k, v = (np.empty((rows, c["hidden_size"] // c["num_attention_heads"])) for _ in range(3))
        self._check(self._lib.attn_model_head(self._handle, _doubles(q), _doubles(k), _doubles(v), tokens, n,
                                              layer, head))
        return {"q": q, "k": k, "v": v}

    def walkthrough(self, layer, head, text=None, ids=None, fmt="markdown"):
        """That head's walkthrough on the text, as `attn model run --layer L
        --head H` prints it (the library's attn_model_head_problem: scaled
        dot-product attention with a causal mask on its q, k and v), in text,
        markdown, latex or json; "steps" gives the engine's list of steps as
        data (docs/steps-json.md)."""
        numbers = formats()
        if fmt not in numbers:
            raise AttentionError(ATTN_ERR_OPTION, f"format: expected one of {', '.join(numbers)}, got {fmt!r:.40}")
        tokens, n = self._ids(text, ids)
        layer = _whole(layer, "layer", -_C_INT, _C_INT - 1)
        head = _whole(head, "head", -_C_INT, _C_INT - 1)
        problem = ctypes.c_void_p()
        self._check(self._lib.attn_model_head_problem(self._handle, ctypes.byref(problem), tokens, n, layer, head))
        try:
            def check(status):
                if status != ATTN_OK:
                    raise AttentionError(status, self._lib.attn_problem_error(problem).decode())
            printed = formatted(self._lib.attn_problem_format, problem, numbers[fmt], check)
        finally:
            self._lib.attn_problem_destroy(problem)
        return json.loads(printed) if fmt == "steps" else printed


def _doubles(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
