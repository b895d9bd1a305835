"""Every kind's results, gradients included, computed by numpy alone: the
textbook formulas with their backward passes by the chain rule, written
here without the engine. The tests compare the engine with them at small
sizes, and bench/python_numpy.py times both at n = 500, 1000 and 2000.

Each function takes the keyword arguments of the matching ae function
and returns a dict with the engine's result names.
"""

import numpy as np

LAYER_NORM_EPSILON = 1e-5  # ATTN_LAYER_NORM_EPSILON


def softmax_rows(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax_backward(weights, grad_weights):
    """dL/d(scaled) from dL/d(weights) through a row softmax."""
    return weights * (grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True))


def _attention(q, k, v):
    scores = q @ k.T
    scaled = scores * (1 / np.sqrt(q.shape[1]))
    weights = softmax_rows(scaled)
    return {"scores": scores, "scaled": scaled, "weights": weights, "output": weights @ v}


def _attention_grads(q, k, v, weights, grad_output):
    grad_weights = grad_output @ v.T
    grad_scaled = softmax_backward(weights, grad_weights)
    grad_scores = grad_scaled * (1 / np.sqrt(q.shape[1]))
    return {"gradQ": grad_scores @ k, "gradK": grad_scores.T @ q, "gradV": weights.T @ grad_output,
            "gradWeights": grad_weights, "gradScaled": grad_scaled}


def sdpa(q, k, v, grad_output=None):
    result = _attention(q, k, v)
    if grad_output is not None:
        result.update(_attention_grads(q, k, v, result["weights"], grad_output))
    return result


def multihead(x, num_heads, wq, wk, wv, wo, grad_output=None):
    q, k, v = x @ wq, x @ wk, x @ wv
    heads = [_attention(q[:, c], k[:, c], v[:, c]) for c in _head_columns(wq, num_heads)]
    concat = np.hstack([head["output"] for head in heads])
    result = {"q": q, "k": k, "v": v, "heads": heads, "concat": concat, "output": concat @ wo}
    if grad_output is not None:
        result.update(_multihead_grads(x, result, wq, wk, wv, wo, grad_output))
    return result


def _head_columns(wq, num_heads):
    width = wq.shape[1] // num_heads
    return [slice(h * width, (h + 1) * width) for h in range(num_heads)]


def _multihead_grads(x, forward, wq, wk, wv, wo, grad_output):
    """The gradients from the forward's results; each head's gradWeights and gradScaled go into its dict."""
    q, k, v = forward["q"], forward["k"], forward["v"]
    grad_concat = grad_output @ wo.T
    grad_q, grad_k, grad_v = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    for head, c in zip(forward["heads"], _head_columns(wq, len(forward["heads"]))):
        grads = _attention_grads(q[:, c], k[:, c], v[:, c], head["weights"], grad_concat[:, c])
        grad_q[:, c], grad_k[:, c], grad_v[:, c] = grads["gradQ"], grads["gradK"], grads["gradV"]
        head.update(gradWeights=grads["gradWeights"], gradScaled=grads["gradScaled"])
    return {"gradX": grad_q @ wq.T + grad_k @ wk.T + grad_v @ wv.T, "gradWq": x.T @ grad_q, "gradWk": x.T @ grad_k,
            "gradWv": x.T @ grad_v, "gradWo": forward["concat"].T @ grad_output}


def additive(query, keys, ws, wh, v, grad_context=None):
    energy = np.tanh((query @ ws)[:, None, :] + (keys @ wh)[None, :, :])
    scores = energy @ v
    weights = softmax_rows(scores)
    result = {"energy": energy, "scores": scores, "weights": weights, "context": weights @ keys}
    if grad_context is not None:
        grad_scores = softmax_backward(weights, grad_context @ keys.T)
        grad_pre = grad_scores[:, :, None] * v * (1 - energy * energy)  # through tanh
        by_query, by_key = grad_pre.sum(axis=1), grad_pre.sum(axis=0)
        result.update(gradQuery=by_query @ ws.T, gradKeys=weights.T @ grad_context + by_key @ wh.T,
                      gradWs=query.T @ by_query, gradWh=keys.T @ by_key,
                      gradV=np.einsum("ij,ija->a", grad_scores, energy))
    return result


def luong_general(query, keys, w, grad_context=None):
    projected = keys @ w
    scores = query @ projected.T
    weights = softmax_rows(scores)
    result = {"scores": scores, "weights": weights, "context": weights @ keys}
    if grad_context is not None:
        grad_scores = softmax_backward(weights, grad_context @ keys.T)
        grad_projected = grad_scores.T @ query
        result.update(gradQuery=grad_scores @ projected, gradKeys=weights.T @ grad_context + grad_projected @ w.T,
                      gradW=keys.T @ grad_projected)
    return result


def _phi(x):
    """elu(x) + 1 and its derivative."""
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0))), np.where(x > 0, 1.0, np.exp(np.minimum(x, 0)))


def linear(q, k, v, grad_output=None):
    phi_q, dphi_q = _phi(q)
    phi_k, dphi_k = _phi(k)
    state, normaliser = phi_k.T @ v, phi_k.sum(axis=0)
    numerator, denominator = phi_q @ state, phi_q @ normaliser
    output = numerator / denominator[:, None]
    result = {"output": output}
    if grad_output is not None:
        grad_numerator = grad_output / denominator[:, None]
        grad_denominator = -(grad_output * output).sum(axis=1) / denominator
        grad_phi_q = grad_numerator @ state.T + grad_denominator[:, None] * normaliser
        grad_state, grad_normaliser = phi_q.T @ grad_numerator, phi_q.T @ grad_denominator
        result.update(gradQ=grad_phi_q * dphi_q, gradK=(v @ grad_state.T + grad_normaliser) * dphi_k,
                      gradV=phi_k @ grad_state)
    return result


def _layer_norm(x, gamma):
    centred = x - x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + LAYER_NORM_EPSILON)
    return centred * rstd * gamma, centred * rstd, rstd


def _layer_norm_backward(grad, normalised, rstd, gamma):
    """dL/dx and dL/dgamma of normalised * gamma (no beta), normalised = (x - mean) * rstd."""
    grad_normalised = grad * gamma
    grad_x = rstd * (grad_normalised - grad_normalised.mean(axis=1, keepdims=True)
                     - normalised * (grad_normalised * normalised).mean(axis=1, keepdims=True))
    return grad_x, (grad * normalised).sum(axis=0)


def transformer_block(x, num_heads, wq, wk, wv, wo, gamma1, w1, w2, gamma2, grad_output=None):
    """The post-norm block without biases: ln1 = LN(x + MHA(x)), ln2 = LN(ln1 + FFN(ln1))."""
    attention = multihead(x, num_heads, wq, wk, wv, wo)
    sum1 = x + attention["output"]
    ln1, normalised1, rstd1 = _layer_norm(sum1, gamma1)
    hidden = np.maximum(ln1 @ w1, 0)
    ffn = hidden @ w2
    sum2 = ln1 + ffn
    ln2, normalised2, rstd2 = _layer_norm(sum2, gamma2)
    result = {"attention": attention["output"], "ln1": ln1, "sum1": sum1, "ln2": ln2, "ffnHidden": hidden,
              "ffn": ffn, "sum2": sum2, "output": ln2,
              "heads": [{"weights": head["weights"]} for head in attention["heads"]]}
    if grad_output is not None:
        grad_sum2, grad_gamma2 = _layer_norm_backward(grad_output, normalised2, rstd2, gamma2)
        grad_hidden = (grad_sum2 @ w2.T) * (hidden > 0)
        grad_ln1 = grad_sum2 + grad_hidden @ w1.T
        grad_sum1, grad_gamma1 = _layer_norm_backward(grad_ln1, normalised1, rstd1, gamma1)
        grads = _multihead_grads(x, attention, wq, wk, wv, wo, grad_sum1)
        result.update(gradX=grad_sum1 + grads["gradX"], gradWq=grads["gradWq"], gradWk=grads["gradWk"],
                      gradWv=grads["gradWv"], gradWo=grads["gradWo"], gradGamma1=grad_gamma1,
                      gradW1=ln1.T @ grad_hidden, gradW2=hidden.T @ grad_sum2, gradGamma2=grad_gamma2)
    return result
