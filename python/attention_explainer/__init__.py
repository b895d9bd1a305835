"""Attention, computed exactly: the C engine from Python, and its walkthrough in a notebook.

    import numpy as np
    import attention_explainer as ae

    result = ae.sdpa(q, k, v)                 # numpy in, numpy out
    result["weights"], result["output"]
    ae.run({"kind": "softmax", "x": [100, 95, 5, 3]})
    print(ae.format(problem, "markdown"))     # what build/attn --format markdown prints
    ae.steps(problem)                         # the walkthrough as data
    ae.show("cat-sat-mat", step=7)            # the live walkthrough in a notebook cell
    ae.check(problem, {"weights": [[0.5, 0.5]]})  # a worked example's printed numbers, checked
    model = ae.Model("my-model")              # a Llama-format checkpoint (docs/models.md)
    model.run(text="The cat")                 # ids, attention, logits

Keyword arguments take Python's spelling of the JS API's field names
(num_heads for numHeads, grad_output for gradOutput); a problem dict takes
the JS API's own. max_bytes (every function that runs a problem) raises
the problem's limit of 256 MiB. Arrays go to the C library as buffers and
results come back as numpy arrays over the memory it filled; float32 and
integer inputs are widened exactly to float64 (docs/embedding.md, "Numbers
in, numbers out"). Errors raise AttentionError with the engine's status and
message.
"""

from ._check import answer, check
from ._engine import AttentionError, format, library, run, steps  # noqa: A004 (format: the CLI's --format)
from ._model import Model
from ._show import Walkthrough, show

__all__ = ["AttentionError", "Model", "Walkthrough", "additive", "answer", "check", "format", "library", "linear", "luong", "multihead",
           "online_softmax", "run", "sdpa", "show", "softmax", "steps", "transformer_block", "weighted_sum"]
__version__ = "0.1.0"


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _run(kind, fields, options):
    max_bytes = options.pop("max_bytes", None)
    problem = {"kind": kind, **fields}
    problem.update({_camel(name): value for name, value in options.items() if value is not None})
    return run(problem, max_bytes=max_bytes)


def sdpa(q, k, v, **options):
    """Scaled dot-product attention: scores, scaled, weights, output (+ gradients with grad_output or target)."""
    return _run("scaledDotProduct", {"q": q, "k": k, "v": v}, options)


def softmax(x, **options):
    """The softmax of each row of x: scaled, max, exp, sum, weights."""
    return _run("softmax", {"x": x}, options)


def weighted_sum(weights, v):
    """weights · v: output."""
    return _run("weightedSum", {"weights": weights, "v": v}, {})


def multihead(x, num_heads, wq, wk, wv, wo, **options):
    """Multi-head attention: q, k, v, heads[h], concat, output (+ gradients with grad_output)."""
    return _run("multiHead", {"x": x, "numHeads": num_heads, "wq": wq, "wk": wk, "wv": wv, "wo": wo}, options)


def additive(query, keys, ws, wh, v, **options):
    """Bahdanau's additive attention: energy, scores, weights, context (+ gradients with grad_context)."""
    return _run("additive", {"query": query, "keys": keys, "ws": ws, "wh": wh, "v": v}, options)


def luong(query, keys, method, **options):
    """Luong's attention (method "dot", "general" or "concat"): scores, weights, context."""
    return _run("luong", {"query": query, "keys": keys, "method": method}, options)


def linear(q, k, v, **options):
    """Linear attention (causal=True for the running sums): output (+ gradients with grad_output)."""
    return _run("linear", {"q": q, "k": k, "v": v}, options)


def transformer_block(x, num_heads, **parameters):
    """A whole transformer block (wq, wk, wv, wo, gamma1, w1, w2, gamma2, ...): its every stage and output."""
    return _run("transformerBlock", {"x": x, "numHeads": num_heads}, parameters)


def online_softmax(q, k, v, **options):
    """Attention tile by tile with the online softmax (tile keys per tile): the same output, and each tile's state."""
    return _run("onlineSoftmax", {"q": q, "k": k, "v": v}, options)
