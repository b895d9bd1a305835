"""`make bench`, the Python package against numpy: each kind with its
gradients at n = 500, 1000 and 2000 (d = 64), computed by attention_explainer
(numpy in, the C library, numpy out) and by numpy alone
(python/tests/numpy_reference.py: the same results, every intermediate),
the two in turn in one process so that both see the same load. Prints each
one's fastest round (on a shared machine the load comes in bursts, which a
median of a few rounds still catches) and the ratio, and checks every
result equal to 1e-12.
Usage: PYTHONPATH=python /usr/bin/python3 bench/python_numpy.py [rounds] [n ...]
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
import attention_explainer as ae  # noqa: E402
import numpy_reference as reference  # noqa: E402

D = 64
HEADS = 2
QUERIES = 32  # additive: decoder states over n encoder states (n x n x d energies would not fit)
LIMIT = 8 * 2**30  # max_bytes: every intermediate of the largest case


def cases(n, rng):
    """(name, the engine's call, numpy's call) for size n."""
    def random(*shape):
        return rng.uniform(-1, 1, shape)
    q, k, v, grad = random(n, D), random(n, D), random(n, D), random(n, D)
    weights = {name: random(D, D) / np.sqrt(D) for name in ("wq", "wk", "wv", "wo")}
    block = dict(weights, gamma1=np.ones(D), w1=random(D, 4 * D) / 8, w2=random(4 * D, D) / 16, gamma2=np.ones(D))
    query, ws, wh, v_a, grad_context = random(QUERIES, D), random(D, D), random(D, D), random(D), random(QUERIES, D)
    w = random(D, D)
    return [
        ("sdpa", lambda: ae.sdpa(q, k, v, grad_output=grad, max_bytes=LIMIT),
         lambda: reference.sdpa(q, k, v, grad_output=grad)),
        ("multihead", lambda: ae.multihead(q, HEADS, grad_output=grad, max_bytes=LIMIT, **weights),
         lambda: reference.multihead(q, HEADS, grad_output=grad, **weights)),
        (f"additive ({QUERIES} queries)",
         lambda: ae.additive(query, k, ws, wh, v_a, grad_context=grad_context, max_bytes=LIMIT),
         lambda: reference.additive(query, k, ws, wh, v_a, grad_context=grad_context)),
        ("luong (general)", lambda: ae.luong(q, k, "general", w=w, grad_context=grad, max_bytes=LIMIT),
         lambda: reference.luong_general(q, k, w, grad_context=grad)),
        ("linear", lambda: ae.linear(q, k, v, grad_output=grad, max_bytes=LIMIT),
         lambda: reference.linear(q, k, v, grad_output=grad)),
        ("transformer_block", lambda: ae.transformer_block(q, HEADS, grad_output=grad, max_bytes=LIMIT, **block),
         lambda: reference.transformer_block(q, HEADS, grad_output=grad, **block)),
    ]


def largest_error(engine, numpy, path=""):
    """The largest |engine - numpy| over every result, after checking both have the same ones."""
    if set(engine) != set(numpy):
        raise AssertionError(f"{path}: the engine's results {sorted(engine)} are not numpy's {sorted(numpy)}")
    errors = [0.0]
    for name, value in engine.items():
        if name == "heads":
            errors += [largest_error(mine, theirs, f"{path}heads.{h}.")
                       for h, (mine, theirs) in enumerate(zip(value, numpy[name]))]
        else:
            errors.append(float(np.max(np.abs(value - numpy[name]))))
    return max(errors)


def timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    sizes = [int(n) for n in sys.argv[2:]] or [500, 1000, 2000]
    rng = np.random.default_rng(35)
    print(f"Python package vs numpy, d = {D}, gradients included, the fastest of {rounds} rounds taken in turn")
    print(f"{'case':<26}{'n':>6}{'attention_explainer':>22}{'numpy':>12}{'ratio':>8}{'max |diff|':>12}")
    worst = 0.0
    for n in sizes:
        for name, engine, numpy in cases(n, rng):
            times = {"engine": [], "numpy": []}
            for _ in range(rounds):
                engine_time, engine_result = timed(engine)
                del engine_result  # not held while numpy runs
                numpy_time, numpy_result = timed(numpy)
                times["engine"].append(engine_time)
                times["numpy"].append(numpy_time)
            error = largest_error(engine(), numpy_result)
            worst = max(worst, error)
            mine, theirs = min(times["engine"]), min(times["numpy"])
            print(f"{name:<26}{n:>6}{mine * 1e3:>19.0f} ms{theirs * 1e3:>9.0f} ms{mine / theirs:>7.2f}×{error:>12.1e}",
                  flush=True)
    if worst > 1e-12:
        raise SystemExit(f"a result differs from numpy's by {worst:.1e}, more than 1e-12")


if __name__ == "__main__":
    main()
