"""attention_explainer against values computed here, independently: numpy
references for each kind, the tutorials' vectors (tests/vectors, computed
offline by compute_expected.py), and finite differences for gradients."""

import json
from pathlib import Path

import numpy as np
import pytest

import attention_explainer as ae

REPO = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(7)


def softmax_rows(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def random(*shape):
    return RNG.uniform(-1, 1, shape)


def expected_array(value):
    """A vector's expected value as numpy (null, a masked entry, as -inf)."""
    if isinstance(value, list):
        return np.array([expected_array(entry) for entry in value], dtype=float)
    return -np.inf if value is None else float(value)


def assert_results(actual, expected, path=""):
    for name, value in expected.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for index, head in enumerate(value):
                assert_results(actual[name][index], head, f"{path}{name}.{index}.")
        else:
            np.testing.assert_allclose(actual[name], expected_array(value), rtol=1e-12, atol=1e-14,
                                       err_msg=f"{path}{name}")


@pytest.mark.parametrize("vector", json.loads((REPO / "tests/vectors/tutorials.json").read_text()),
                         ids=lambda vector: vector["id"])
def test_every_tutorial_vector_runs_to_its_exact_results(vector):
    assert_results(ae.run(vector["input"]), vector["expected"])


def test_sdpa_takes_and_gives_numpy_and_matches_the_textbook_formula():
    q, k, v = random(3, 4), random(5, 4), random(5, 2)
    result = ae.sdpa(q, k, v)
    weights = softmax_rows(q @ k.T / 2.0)
    assert isinstance(result["output"], np.ndarray) and result["output"].shape == (3, 2)
    np.testing.assert_allclose(result["weights"], weights, rtol=1e-13)
    np.testing.assert_allclose(result["output"], weights @ v, rtol=1e-13)


def test_a_masked_score_comes_back_as_minus_infinity_and_gets_no_weight():
    result = ae.sdpa([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]], mask=[[True, False]])
    assert result["scaled"][0, 1] == -np.inf
    np.testing.assert_allclose(result["weights"], [[1.0, 0.0]])
    np.testing.assert_allclose(result["output"], [[1.0]])


def test_multihead_splits_projects_and_recombines_as_numpy_does():
    x = random(4, 6)
    wq, wk, wv, wo = (random(6, 6) for _ in range(4))
    result = ae.multihead(x, 2, wq, wk, wv, wo)
    q, k, v = x @ wq, x @ wk, x @ wv
    heads = [softmax_rows(q[:, h * 3:(h + 1) * 3] @ k[:, h * 3:(h + 1) * 3].T / np.sqrt(3)) @ v[:, h * 3:(h + 1) * 3]
             for h in range(2)]
    np.testing.assert_allclose(result["output"], np.hstack(heads) @ wo, rtol=1e-12)
    assert len(result["heads"]) == 2 and result["heads"][1]["weights"].shape == (4, 4)


def test_additive_and_luong_match_their_formulas():
    query, keys = random(2, 3), random(4, 5)
    ws, wh, v = random(3, 6), random(5, 6), random(6)
    additive = ae.additive(query, keys, ws, wh, v)
    energy = np.tanh((query @ ws)[:, None, :] + (keys @ wh)[None, :, :])
    weights = softmax_rows(energy @ v)
    np.testing.assert_allclose(additive["weights"], weights, rtol=1e-12)
    np.testing.assert_allclose(additive["context"], weights @ keys, rtol=1e-12)

    w = random(5, 3)
    luong = ae.luong(query, keys, "general", w=w)
    weights = softmax_rows(query @ (keys @ w).T)
    np.testing.assert_allclose(luong["context"], weights @ keys, rtol=1e-12)


def test_linear_attention_matches_its_feature_map_formula_causal_or_not():
    q, k, v = random(5, 3), random(5, 3), random(5, 2)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # elu(x) + 1
    full = (phi(q) @ (phi(k).T @ v)) / (phi(q) @ phi(k).sum(axis=0))[:, None]
    np.testing.assert_allclose(ae.linear(q, k, v)["output"], full, rtol=1e-12)
    causal = np.array([phi(q[i]) @ (phi(k[:i + 1]).T @ v[:i + 1]) / (phi(q[i]) @ phi(k[:i + 1]).sum(axis=0))
                       for i in range(5)])
    np.testing.assert_allclose(ae.linear(q, k, v, causal=True)["output"], causal, rtol=1e-12)


def test_the_online_softmax_tile_by_tile_gives_the_textbook_output():
    q, k, v = random(3, 4), random(5, 4), random(5, 2)
    result = ae.online_softmax(q, k, v, tile=2)
    np.testing.assert_allclose(result["output"], softmax_rows(q @ k.T / 2.0) @ v, rtol=1e-12)


def test_gradients_of_sdpa_equal_finite_differences():
    q, k, v, grad_output = random(2, 3), random(3, 3), random(3, 2), random(2, 2)
    result = ae.sdpa(q, k, v, grad_output=grad_output)

    def loss(q_):
        return float((ae.sdpa(q_, k, v)["output"] * grad_output).sum())
    step = 1e-6
    numeric = np.zeros_like(q)
    for index in np.ndindex(q.shape):
        plus, minus = q.copy(), q.copy()
        plus[index] += step
        minus[index] -= step
        numeric[index] = (loss(plus) - loss(minus)) / (2 * step)
    np.testing.assert_allclose(result["gradQ"], numeric, rtol=1e-6, atol=1e-9)


def test_a_transformer_block_runs_and_its_input_gradient_equals_finite_differences():
    d, f = 4, 6
    params = dict(wq=random(d, d), wk=random(d, d), wv=random(d, d), wo=random(d, d), gamma1=np.ones(d),
                  w1=random(d, f), w2=random(f, d), gamma2=np.ones(d))
    x, grad_output = random(3, d), random(3, d)
    result = ae.transformer_block(x, 2, grad_output=grad_output, **params)
    assert result["output"].shape == (3, d)

    def loss(x_):
        return float((ae.transformer_block(x_, 2, **params)["output"] * grad_output).sum())
    step = 1e-6
    index = (1, 2)
    plus, minus = x.copy(), x.copy()
    plus[index] += step
    minus[index] -= step
    assert result["gradX"][index] == pytest.approx((loss(plus) - loss(minus)) / (2 * step), rel=1e-5)


def test_format_prints_what_the_cli_prints_and_steps_is_the_walkthrough_as_data():
    problem = {"kind": "softmax", "x": [100, 95, 5, 3]}
    markdown = ae.format(problem, "markdown")
    assert markdown.startswith("# Softmax")
    assert "0.9933" in markdown
    steps = ae.steps(problem)
    assert [step["id"] for step in steps["steps"]][:1] == ["inputs"] and len(steps["steps"]) >= 4
    titled = ae.format(problem, "markdown", title="My softmax", heading_level=2)
    assert titled.startswith("## My softmax")


def test_errors_raise_attention_error_with_the_engines_status_and_message():
    with pytest.raises(ae.AttentionError) as caught:
        ae.run({"kind": "scaledDotProduct", "q": [[1, 0]], "k": [[1, 2, 3]], "v": [[1]]})
    assert caught.value.status == 10
    assert str(caught.value) == "k: expected a matrix with 2 columns (d_k, the columns of q), got 1x3"
    with pytest.raises(ae.AttentionError) as caught:
        ae.run({"kind": "telepathy"})
    assert caught.value.status == 5
    assert str(caught.value) == (
        'kind: unknown kind "telepathy"; expected one of "scaledDotProduct", "weightedSum", "multiHead", '
        '"additive", "luong", "linear", "softmax", "transformerBlock", "onlineSoftmax"')
    with pytest.raises(ae.AttentionError) as caught:
        ae.softmax([1.0, np.nan])
    assert caught.value.status == 10 and "x" in str(caught.value)
    with pytest.raises(ae.AttentionError) as caught:
        ae.format({"kind": "softmax", "x": [1]}, "pdf")
    assert "format" in str(caught.value)
    with pytest.raises(ae.AttentionError) as caught:
        ae.sdpa([[1, 0]], [[1, 0], [0]], [[1], [2]])
    assert caught.value.status == 10 and str(caught.value).startswith("k:")


@pytest.mark.parametrize("call, message", [
    (lambda: ae.sdpa(np.array([[1j, 0]]), [[1, 0]], [[1]]), "q: expected real numbers, got complex numbers (1j)"),
    (lambda: ae.softmax([1, "2"]), "x[1]: expected a number, got a string"),
    (lambda: ae.softmax([[1, 2], [3, None]]), "x[1][1]: expected a number, got null"),
    (lambda: ae.softmax(np.array(3.0)), "x: expected an array of 1 to 3 dimensions, got 0"),
    (lambda: ae.softmax(None), "x: missing (a vector or a matrix of scores)"),
    (lambda: ae.run({"kind": "softmax", "x": [1], 3: 4}), "field names must be strings, got int 3"),
])
def test_input_numpy_would_coerce_is_refused_as_the_cli_and_js_refuse_it(call, message):
    with pytest.raises(ae.AttentionError) as caught:
        call()
    assert caught.value.status == 10
    assert str(caught.value) == message


SDPA = {"kind": "scaledDotProduct", "q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1], [2]]}
UNPAIRED = "an unpaired surrogate (U+D800 at index 1), which is not text"


@pytest.mark.parametrize("call, message", [
    (lambda: ae.run({"kind": "softmax\0junk", "x": [1]}), "invalid input at line 1, column 17: \\u0000 (a NUL character) in a string; names and values must not contain one"),
    (lambda: ae.run({"kind": "softmax", "x\0junk": [1]}), "invalid input at line 1, column 21: \\u0000 (a NUL character) in a string; names and values must not contain one"),
    (lambda: ae.run({"kind": "softmax", "x": [1], "x\0": [2]}), "invalid input at line 1, column 29: \\u0000 (a NUL character) in a string; names and values must not contain one"),
    (lambda: ae.run({**SDPA, "mask": "causal\0junk"}), "invalid input at line 1, column 92: \\u0000 (a NUL character) in a string; names and values must not contain one"),
    (lambda: ae.run({**SDPA, "tokens": ["a", "b\0c"]}), "invalid input at line 1, column 94: \\u0000 (a NUL character) in a string; names and values must not contain one"),
    (lambda: ae.format(SDPA, "text", title="T\0"), "title: must not contain a NUL character"),
    (lambda: ae.check(SDPA, {"weights\0junk": [[1, 0], [0, 1]]}),
     'printed key "weights\\u0000junk": must not contain a NUL character'),
    (lambda: ae.run({**SDPA, "tokens": ["a", "b\ud800"]}), "tokens[1]: must be valid UTF-8 (byte 2 is 0xed)"),
    (lambda: ae.run({**SDPA, "mask": "c\ud800"}), "mask: must be valid UTF-8 (byte 2 is 0xed)"),
    (lambda: ae.format(SDPA, "text", title="T\ud800"), f"title: must not contain {UNPAIRED}"),
])
def test_a_nul_or_an_unpaired_surrogate_in_any_name_or_text_is_refused_naming_it(call, message):
    with pytest.raises(ae.AttentionError) as caught:
        call()
    assert caught.value.status == 10
    assert str(caught.value) == message


def _nested(depth):
    table = [0.5]
    for _ in range(depth - 1):
        table = [table]
    return table


@pytest.mark.parametrize("call, status, message", [
    (lambda: ae.format(SDPA, "text", heading_level=2**32 + 3), 6, "heading level: must be 1 to 4, got 4294967299"),
    (lambda: ae.format(SDPA, "text", heading_level=True), 6, "heading level: must be 1 to 4, got True"),
    (lambda: ae.format(SDPA, "text", title=5), 10, "title: expected text, got int 5"),
    (lambda: ae.check(SDPA, {"weights": _nested(5000)}), 10, "printed.weights: expected at most 3 levels of nesting"),
    (lambda: ae.check(SDPA, {"weights": _nested(4)}), 10, "printed.weights: expected at most 3 levels of nesting"),
])
def test_a_wrong_heading_level_title_or_nesting_raises_attention_error_not_a_python_error(call, status, message):
    with pytest.raises(ae.AttentionError) as caught:
        call()
    assert (caught.value.status, str(caught.value)) == (status, message)


def test_none_leaves_a_field_out_and_numpy_text_arrays_are_labels():
    problem = {"kind": "scaledDotProduct", "q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1], [2]]}
    plain = ae.run(problem)["weights"]
    assert np.array_equal(ae.run({**problem, "mask": None})["weights"], plain)
    labelled = ae.format({**problem, "tokens": np.array(["cat", "sat"])}, "text")
    assert "cat" in labelled and "sat" in labelled
