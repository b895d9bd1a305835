"""ae.check against the worked examples of tests/fixtures/check (printed by
an independent script, make_cases.py, each with the slip it names) and
against build/attn check's report for the same input, byte for byte as
JSON; bad printed input names its key."""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import attention_explainer as ae

REPO = Path(__file__).resolve().parents[2]
CASES = json.loads((REPO / "tests/fixtures/check/cases.json").read_text())
CLI = REPO / "build/attn"


def split(case):
    problem = dict(case["input"])
    return problem, problem.pop("printed"), problem.pop("printedDecimals", None)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_every_worked_example_is_explained_by_the_slip_it_was_printed_with(case):
    problem, printed, decimals = split(case)
    report = ae.check(problem, printed, decimals)
    causes = sorted({group["cause"] for group in report["groups"]})
    assert causes == sorted(case["expect"]["causes"])
    assert all(len(group["explanation"]) > 40 for group in report["groups"])


@pytest.mark.skipif(not CLI.exists(), reason="make build/attn first")
@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_the_report_is_the_one_build_attn_check_prints(case):
    problem, printed, decimals = split(case)
    native = subprocess.run([str(CLI), "check", "-"], input=json.dumps(case["input"]).encode(),
                            capture_output=True, check=False)
    assert native.returncode in (0, 1), native.stderr
    expected = ae._check._report(native.stdout.decode())
    report = ae.check(problem, printed, decimals)
    # build/attn reads each number's decimals from the JSON text; numbers
    # that arrive as floats without decimals are read to their table's
    # most, said so, and give the same errata.
    inferred = report.pop("decimalsInferred")
    assert expected.pop("decimalsInferred") == {}
    assert report == expected
    assert bool(inferred) == (decimals is None and expected["checked"] > 0)
    markdown = subprocess.run([str(CLI), "check", "--format", "markdown", "-"],
                              input=json.dumps(case["input"]).encode(), capture_output=True, check=False)
    said, *paragraphs = ae.check(problem, printed, decimals, format="markdown").split("\n\n")
    told = [p for p in paragraphs if p.startswith("Decimals inferred")]
    assert len(told) == (1 if inferred else 0)
    assert "\n\n".join([said, *(p for p in paragraphs if p not in told)]) == markdown.stdout.decode()


def test_correct_numbers_give_no_errata_and_count_every_printed_number():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    scores = q @ q.T
    weights = np.exp(scores / math.sqrt(2))
    weights /= weights.sum(axis=1, keepdims=True)
    report = ae.check({"kind": "scaledDotProduct", "q": q, "k": q, "v": q},
                      {"scores": scores.tolist(), "weights": np.round(weights, 4).tolist(), "note": "by hand"},
                      decimals=4)
    assert report["errata"] == [] and report["groups"] == []
    assert report["checked"] == 18 and report["unchecked"] == []


def test_a_typo_never_passes_a_check():
    problem = {"kind": "softmax", "x": [1.0, 2.0, 3.0]}
    with pytest.raises(ae.AttentionError, match='did you mean "weights"'):
        ae.check(problem, {"weight": [0.09, 0.24, 0.67]})
    with pytest.raises(ae.AttentionError, match='decimals.weigths: no printed table is named "weigths"'):
        ae.check(problem, {"weights": [0.09, 0.24, 0.67]}, decimals={"weigths": 2})
    assert ae.check(problem, {"sqrt_dk": 2})["checked"] == 0
    assert "Nothing was checked" in ae.check(problem, {"sqrt_dk": 2}, format="text")


def test_an_unscaled_softmax_is_named_with_its_printed_and_exact_numbers():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    scores = q @ q.T
    unscaled = np.exp(scores)
    unscaled /= unscaled.sum(axis=1, keepdims=True)
    exact = np.exp(scores / math.sqrt(2))
    exact /= exact.sum(axis=1, keepdims=True)
    report = ae.check({"kind": "scaledDotProduct", "q": q, "k": q, "v": q},
                      {"weights": np.round(unscaled, 3)}, decimals=3)
    assert [group["cause"] for group in report["groups"]] == ["no-scale"]
    first = report["errata"][0]
    assert first["field"] == "weights" and first["decimals"] == 3
    row, column = first["index"]
    assert first["exact"] == pytest.approx(exact[row, column], abs=1e-15)
    assert first["printed"] == round(unscaled[row, column], 3)


def test_a_masked_score_may_be_printed_as_none_or_minus_infinity():
    problem = {"kind": "scaledDotProduct", "q": [[1.0, 0.0], [0.0, 1.0]], "k": [[1.0, 0.0], [0.0, 1.0]],
               "v": [[1.0], [2.0]], "mask": [[True, False], [True, True]]}
    for masked in (None, -math.inf):
        report = ae.check(problem, {"scaled": [[1 / math.sqrt(2), masked], [0.0, 1 / math.sqrt(2)]]})
        assert report["errata"] == [] and report["checked"] == 4


@pytest.mark.parametrize("printed, decimals, message", [
    ([[0.5]], None, "printed: expected a dict of printed tables by result name"),
    ({"weights": [[0.5, "x"]]}, None, "printed.weights[0][1]: expected a number, got str 'x'"),
    ({"weights": [[0.5, float("nan")]]}, None, "printed.weights[0][1]: expected a number, got float nan"),
    ({"weights": [[0.5, 0.5], [0.5]]}, None, "printed.weights[1]: expected the shape [2] of printed.weights[0]"),
    ({"weights": []}, None, "printed.weights: must not be empty"),
    ({"heads": [3]}, None, "printed.heads[0]: expected a dict of that head's tables, got int 3"),
    ({"weights": "0.5 0.5"}, None, "printed.weights: expected the numbers of weights (a number or a table of them), got text"),
    ({"weights": [[0.5, 0.5]]}, 18, "decimals.weights: expected a whole number of decimals from 0 to 17, got int 18"),
    ({"weights": [[0.5, 0.5]]}, {"weights": [2, 2, 2]}, "decimals.weights: expected one number or 2"),
    ({"weights": [[0.5, 0.5]]}, "two", "decimals: expected a number or a dict by printed key"),
])
def test_bad_printed_input_is_refused_naming_its_key(printed, decimals, message):
    problem = {"kind": "scaledDotProduct", "q": [[1.0, 0.0]], "k": [[1.0, 0.0], [0.0, 1.0]], "v": [[1.0], [2.0]]}
    with pytest.raises(ae.AttentionError) as raised:
        ae.check(problem, printed, decimals)
    assert message in str(raised.value)
    assert raised.value.status == 10


def test_a_report_format_the_check_has_not_is_refused():
    with pytest.raises(ae.AttentionError, match="format: expected one of json, text, markdown, latex, got 'steps'"):
        ae.check({"kind": "softmax", "x": [1.0, 2.0]}, {"weights": [0.27, 0.73]}, format="steps")


def test_a_misprinted_score_carried_into_the_output_is_rooted_at_the_score_whatever_the_tables_order():
    # An author's slip in one score, carried by exact arithmetic into the
    # weights and the output, each table rounded as printed: the printed
    # weights, rounded, no longer give the printed output exactly, and
    # the output must still be carried from the score, not a misprint of
    # its own. Tables given in every order.
    rng = np.random.default_rng(7)
    for _ in range(200):
        d = int(rng.integers(2, 5))
        q, k, v = (np.round(rng.uniform(-1, 1, (3, d)), 1) for _ in range(3))
        scores = q @ k.T
        i, j = (int(x) for x in rng.integers(0, 3, 2))
        scores[i, j] += float(rng.choice([0.1, 0.2, 0.5, 1.0, -0.3, 2.0]))
        weights = np.exp(scores / math.sqrt(d))
        weights /= weights.sum(axis=1, keepdims=True)
        places = int(rng.choice([2, 3]))
        tables = {"scores": (scores, 2), "weights": (weights, places), "output": (weights @ v, places)}
        order = list(tables)
        rng.shuffle(order)
        printed = {key: np.round(tables[key][0], tables[key][1]) for key in order}
        decimals = {key: tables[key][1] for key in order}
        report = ae.check({"kind": "scaledDotProduct", "q": q, "k": k, "v": v}, printed, decimals)
        groups = [(group["cause"], group["root"]) for group in report["groups"]]
        assert groups == [("misprint", {"field": "scores", "index": [i, j]})], (order, groups)


def test_a_learners_answer_is_graded_as_the_check_grades_one_printed_number():
    # q·kᵀ row 0 = [1, 0, 1], d_k = 2: the weight of key 0 with and without dividing by √2.
    problem = {"kind": "scaledDotProduct", "q": [[1, 0], [0, 1], [1, 1]], "k": [[1, 0], [0, 1], [1, 1]],
               "v": [[1, 2], [3, 4], [5, 6]]}
    softmax = lambda row: [math.exp(x) / sum(math.exp(y) for y in row) for x in row]
    exact = softmax([1 / math.sqrt(2), 0, 1 / math.sqrt(2)])[0]
    unscaled = softmax([1, 0, 1])[0]
    right = ae.answer(problem, "weights", 0, 0, f"{exact:.3f}")
    assert right["right"] and right["cause"] is None and right["decimals"] == 3
    wrong = ae.answer(problem, "weights", 0, 0, f"{unscaled:.2f}")
    assert not wrong["right"]
    assert wrong["cause"] == "no-scale"
    assert wrong["verdict"] == "This is the weight without dividing the scores by √d_k = 1.4142."
    assert wrong["rounded"] == f"{exact:.2f}"
    with pytest.raises(ae.AttentionError, match=r"answer: weights has no cell \[3\]\[0\]"):
        ae.answer(problem, "weights", 3, 0, "0.4")
