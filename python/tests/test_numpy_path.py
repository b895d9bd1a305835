"""numpy straight into C: every kind and its gradients against numpy's own
computation of the same results (numpy_reference.py, no engine in it),
inputs passed as buffers without a copy, results as arrays over the memory
the library filled, other dtypes widened by the documented rule, and the
problem's byte limit as max_bytes."""

import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import attention_explainer as ae
import numpy_reference as reference

RNG = np.random.default_rng(35)


def random(*shape):
    return RNG.uniform(-1, 1, shape)


def assert_equal_to_1e_12(engine, numpy, path=""):
    assert set(engine) == set(numpy), path
    for name, value in engine.items():
        if name == "heads":
            for head, (mine, theirs) in enumerate(zip(value, numpy[name])):
                assert_equal_to_1e_12(mine, theirs, f"{path}heads.{head}.")
        else:
            np.testing.assert_allclose(value, numpy[name], rtol=1e-12, atol=1e-12, err_msg=f"{path}{name}")


D = 8
Q, K, V, GRAD = random(9, D), random(11, D), random(11, D), random(9, D)
X = random(9, D)
WEIGHTS = {name: random(D, D) for name in ("wq", "wk", "wv", "wo")}
BLOCK = dict(WEIGHTS, gamma1=random(D), w1=random(D, 16), w2=random(16, D), gamma2=random(D))
QUERY, WS, WH, V_A, W = random(3, D), random(D, D), random(D, D), random(D), random(D, D)
GRAD_CONTEXT = random(3, D)

KINDS = {
    "sdpa": (lambda: ae.sdpa(Q, K, V, grad_output=GRAD), lambda: reference.sdpa(Q, K, V, grad_output=GRAD)),
    "multihead": (lambda: ae.multihead(X, 2, grad_output=GRAD, **WEIGHTS),
                  lambda: reference.multihead(X, 2, grad_output=GRAD, **WEIGHTS)),
    "additive": (lambda: ae.additive(QUERY, K, WS, WH, V_A, grad_context=GRAD_CONTEXT),
                 lambda: reference.additive(QUERY, K, WS, WH, V_A, grad_context=GRAD_CONTEXT)),
    "luong": (lambda: ae.luong(QUERY, K, "general", w=W, grad_context=GRAD_CONTEXT),
              lambda: reference.luong_general(QUERY, K, W, grad_context=GRAD_CONTEXT)),
    "linear": (lambda: ae.linear(Q, K, V, grad_output=GRAD), lambda: reference.linear(Q, K, V, grad_output=GRAD)),
    "transformer_block": (lambda: ae.transformer_block(X, 2, grad_output=GRAD, **BLOCK),
                          lambda: reference.transformer_block(X, 2, grad_output=GRAD, **BLOCK)),
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_result_and_gradient_equals_numpys_own_computation_to_1e_12(kind):
    engine, numpy = KINDS[kind]
    assert_equal_to_1e_12(engine(), numpy())


def test_float64_inputs_go_in_and_results_come_out_without_numpy_allocating_a_copy():
    q, k, v = random(512, 64), random(512, 64), random(512, 64)  # 256 KiB each; weights 2 MiB
    gc.collect()
    tracemalloc.start()
    result = ae.sdpa(q, k, v)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # numpy reports its allocations to tracemalloc: a converted input or a
    # copied result would show as at least 256 KiB.
    assert peak < 64 * 1024
    assert not result["weights"].flags.owndata and result["weights"].shape == (512, 512)
    np.testing.assert_allclose(result["output"], reference.sdpa(q, k, v)["output"], rtol=1e-12, atol=1e-12)


def test_a_float32_input_is_converted_once_on_its_way_in():
    q = random(512, 64).astype(np.float32)
    k, v = random(512, 64), random(512, 64)
    gc.collect()
    tracemalloc.start()
    ae.sdpa(q, k, v)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 256 * 1024 <= peak < 256 * 1024 + 64 * 1024  # one float64 copy of q, nothing more


def test_a_run_holds_no_more_memory_than_its_results_and_one_copy_of_its_inputs():
    # In a fresh process, whose peak resident size is then this run's.
    script = textwrap.dedent("""
        import resource, numpy as np, attention_explainer as ae
        rng = np.random.default_rng(0)
        q, k, v, grad = (rng.uniform(-1, 1, (1000, 64)) for _ in range(4))
        ae.sdpa(q[:2], k[:2], v[:2])  # the library loaded
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = ae.sdpa(q, k, v, grad_output=grad)
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
        print(grown, sum(array.nbytes for array in result.values()), 4 * q.nbytes)
    """)
    package = str(Path(ae.__file__).parents[1])
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")]))}
    grown, results, inputs = map(int, subprocess.run([sys.executable, "-c", script], env=environment, check=True,
                                                     capture_output=True, text=True).stdout.split())
    assert results == 5 * 1000 * 1000 * 8 + 4 * 1000 * 64 * 8
    assert grown <= results + inputs + 1024 * 1024  # a page table's worth of slack


def test_result_arrays_keep_their_problem_alive_after_every_other_reference_is_gone():
    weights = ae.sdpa(Q, K, V)["weights"]
    gc.collect()
    ae.sdpa(random(9, D), random(11, D), random(11, D))  # memory freed by the first would be reused here
    np.testing.assert_allclose(weights, reference.sdpa(Q, K, V)["weights"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("convert", [
    lambda x: np.asfortranarray(x),
    lambda x: np.repeat(x, 2, axis=1)[:, ::2],
    lambda x: x.astype(np.float32),
    lambda x: np.round(x * 100).astype(np.int64),
    lambda x: np.round(x * 100).astype(np.int16),
    lambda x: (x > 0),
    lambda x: x.tolist(),
], ids=["fortran-order", "strided", "float32", "int64", "int16", "bool", "list"])
def test_other_layouts_and_dtypes_give_the_results_of_their_values_widened_exactly_to_float64(convert):
    q = convert(Q)
    widened = np.array(q, dtype=np.float64)  # every float32, bool and integer up to 2**53 is a double
    assert_equal_to_1e_12(ae.sdpa(q, K, V, grad_output=GRAD), reference.sdpa(widened, K, V, grad_output=GRAD))
    exact = ae.sdpa(widened, K, V)
    for name, value in ae.sdpa(q, K, V).items():
        assert np.array_equal(value, exact[name]), name


@pytest.mark.parametrize("q, message", [
    (np.array([[1, 2**53 + 1]], dtype=np.int64), "q[0][1]: 9007199254740993 is past 2**53, where float64 would "
                                                 "round it; convert it first"),
    (np.array([[1, -(2**60)]], dtype=np.int64), "q[0][1]: -1152921504606846976 is past 2**53, where float64 "
                                                "would round it; convert it first"),
    ([[1, 2**70 + 1]], "q[0][1]: 1180591620717411303425 is past 2**53, where float64 would round it; convert it first"),
    (np.ones((1, 2), dtype=np.longdouble), "q: expected float64 or narrower, got float128, which float64 would "
                                           "round; convert it first"),
], ids=["int64-past-2**53", "negative-int64", "python-int", "longdouble"])
def test_values_float64_would_round_are_refused_never_rounded_silently(q, message):
    with pytest.raises(ae.AttentionError) as caught:
        ae.sdpa(q, [[1.0, 0.0]], [[1.0]])
    assert (caught.value.status, str(caught.value)) == (10, message)


def test_max_bytes_refuses_an_input_past_the_limit_naming_pythons_option():
    with pytest.raises(ae.AttentionError) as caught:
        ae.sdpa(Q, K, V, max_bytes=1000)
    assert caught.value.status == 12
    assert str(caught.value) == ("k: 11x8 would make the problem hold 1280 bytes, more than its limit of 1000 bytes; "
                                 "use smaller inputs or raise the limit (max_bytes)")


def test_max_bytes_refuses_results_past_the_limit_and_a_higher_one_lets_them_through():
    problem = {"kind": "scaledDotProduct", "q": random(100, 1), "k": random(100, 1), "v": random(100, 1)}
    with pytest.raises(ae.AttentionError) as caught:
        ae.run(problem, max_bytes=10_000)
    assert caught.value.status == 12
    assert str(caught.value).endswith("raise the limit (max_bytes)")
    assert ae.run(problem, max_bytes=1_000_000)["weights"].shape == (100, 100)
    for call in (lambda: ae.format(problem, "json", max_bytes=10_000), lambda: ae.steps(problem, max_bytes=10_000),
                 lambda: ae.check(problem, {"weights": [[0.01]]}, max_bytes=10_000)):
        with pytest.raises(ae.AttentionError) as caught:
            call()
        assert caught.value.status == 12


@pytest.mark.parametrize("max_bytes", [0, -5, True, 1.5, "1000", 2**64])
def test_a_max_bytes_that_is_not_a_byte_count_is_refused(max_bytes):
    with pytest.raises(ae.AttentionError) as caught:
        ae.sdpa(Q, K, V, max_bytes=max_bytes)
    assert caught.value.status == 6
    assert str(caught.value) == (f"max_bytes: must be a whole number of bytes from 1 to {2**64 - 1}, "
                                 f"got {max_bytes!r}")
