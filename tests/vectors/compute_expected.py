#!/usr/bin/env python3
"""Computes the exact values of the tutorial test vectors, offline.

    python3 tests/vectors/compute_expected.py   # writes the JSON files and
                                                # the errata table in README.md

Writes tests/vectors/tutorials.json (vectors: inputs, exact results, the
tutorials' printed numbers and their errata) and tests/vectors/claims.json
(statements that are not computations: row sums, shapes, memory sizes).

This is an independent reference, not the C engine: Python 3 standard library
only, never run by the build or the tests. Every value is computed in decimal
arithmetic with 50 significant digits (Decimal.exp, .ln and .sqrt are
correctly rounded), so the 17 digits written are the true values of the
decimal inputs. The same code run again in binary floating point (math.exp,
math.fsum) must agree to 1e-12 relative, which guards against slips in the
decimal path. Running the script twice gives byte-identical files.
"""
import json
import math
import os
from decimal import Decimal, Context, ROUND_HALF_EVEN, ROUND_HALF_UP, getcontext

getcontext().prec = 50
HERE = os.path.dirname(os.path.abspath(__file__))
SIGNIFICANT_DIGITS = 17
CROSS_CHECK_TOLERANCE = 1e-12

T000 = "000_b7d974f2dfb97227.txt"
T001 = "001_172e048406e4f37c.txt"
T002 = "002_78f5ec663b52750d.txt"
T003 = "003_276ef66dffc1cb2c.txt"
T004 = "004_ad55b564bf9e6848.txt"


# ---- Two arithmetics for one set of formulas ----

class DecimalArithmetic:
    """The reference: 50-digit decimals, exact for the tutorials' inputs."""
    name = "decimal"

    @staticmethod
    def number(literal):
        return Decimal(str(literal))

    @staticmethod
    def exp(x):
        return x.exp()

    @staticmethod
    def sqrt(x):
        return x.sqrt()

    @staticmethod
    def total(values):
        return sum(values, Decimal(0))


class FloatArithmetic:
    """The cross-check: binary doubles with a correctly rounded sum."""
    name = "float"

    @staticmethod
    def number(literal):
        return float(literal)

    exp = staticmethod(math.exp)
    sqrt = staticmethod(math.sqrt)
    total = staticmethod(math.fsum)


MINUS_INFINITY = None  # a masked entry of `scaled`; JSON null


def to_numbers(value, arith):
    """Input literals (str, int, Decimal) as numbers of `arith`, any nesting."""
    if isinstance(value, list):
        return [to_numbers(item, arith) for item in value]
    return arith.number(value)


def matmul(a, b, arith):
    """[n, m] @ [m, p] -> [n, p]."""
    return [[arith.total(a[i][t] * b[t][j] for t in range(len(b)))
             for j in range(len(b[0]))] for i in range(len(a))]


def transpose(a):
    return [list(column) for column in zip(*a)]


def softmax_row(scaled, arith):
    """One row: scaled entries (None = masked) -> max, exp, sum, weights."""
    allowed = [x for x in scaled if x is not MINUS_INFINITY]
    row_max = max(allowed)
    exps = [arith.number(0) if x is MINUS_INFINITY else arith.exp(x - row_max)
            for x in scaled]
    row_sum = arith.total(exps)
    return row_max, exps, row_sum, [e / row_sum for e in exps]


def scale_and_mask(scores, scale, allowed):
    """[n_q, n_k] scores -> scaled, masked entries None."""
    return [[s * scale if allowed(i, j) else MINUS_INFINITY
             for j, s in enumerate(row)] for i, row in enumerate(scores)]


def mask_predicate(mask):
    if mask is None or mask == "none":
        return lambda i, j: True
    if mask == "causal":
        return lambda i, j: j <= i
    return lambda i, j: bool(mask[i][j])


def scale_factor(scale, d_k, arith):
    """The header's rule: true/absent = 1/sqrt(d_k), false = 1, a number."""
    if scale is None or scale is True:
        return arith.number(1) / arith.sqrt(arith.number(d_k))
    if scale is False:
        return arith.number(1)
    return arith.number(scale)


def attend(scores, v, scale, mask, arith):
    """scores [n_q, n_k] -> scaled, weights, output (output None without v)."""
    scaled = scale_and_mask(scores, scale, mask_predicate(mask))
    weights = [softmax_row(row, arith)[3] for row in scaled]
    output = matmul(weights, v, arith) if v is not None else None
    return scaled, weights, output


def run_scaled_dot_product(problem, arith):
    v = to_numbers(problem["v"], arith) if "v" in problem else None
    if "scores" in problem:
        scores = to_numbers(problem["scores"], arith)
        d_k = problem.get("dk", 1)
        result = {}
    else:
        q = to_numbers(problem["q"], arith)
        k = to_numbers(problem["k"], arith)
        scores = matmul(q, transpose(k), arith)
        d_k = len(q[0])
        result = {"scores": scores}
    scale = scale_factor(problem.get("scale"), d_k, arith)
    scaled, weights, output = attend(scores, v, scale, problem.get("mask"), arith)
    result.update(scaled=scaled, weights=weights)
    if output is not None:
        result["output"] = output
    return result


def run_multi_head(problem, arith):
    x = to_numbers(problem["x"], arith)
    x_kv = to_numbers(problem["xkv"], arith) if "xkv" in problem else x
    heads = problem["numHeads"]

    def project(inputs, weight_name, bias_name):
        out = matmul(inputs, to_numbers(problem[weight_name], arith), arith)
        if bias_name in problem:
            bias = to_numbers(problem[bias_name], arith)
            out = [[value + b for value, b in zip(row, bias)] for row in out]
        return out

    q, k, v = project(x, "wq", "bq"), project(x_kv, "wk", "bk"), project(x_kv, "wv", "bv")
    d_head = len(q[0]) // heads
    scale = scale_factor(problem.get("scale"), d_head, arith)
    head_results = []
    for h in range(heads):
        block = slice(h * d_head, (h + 1) * d_head)
        q_h = [row[block] for row in q]
        k_h = [row[block] for row in k]
        v_h = [row[block] for row in v]
        scores = matmul(q_h, transpose(k_h), arith)
        scaled, weights, output = attend(scores, v_h, scale, problem.get("mask"), arith)
        head_results.append({"scores": scores, "scaled": scaled,
                             "weights": weights, "output": output})
    concat = [sum((head["output"][i] for head in head_results), [])
              for i in range(len(x))]
    return {"q": q, "k": k, "v": v, "heads": head_results, "concat": concat,
            "output": project(concat, "wo", "bo")}


def run_softmax(problem, arith):
    x = to_numbers(problem["x"], arith)
    is_vector = not isinstance(x[0], list)
    rows = [x] if is_vector else x
    mask = problem.get("mask")
    if mask is not None and is_vector:
        mask = [mask]
    scale = arith.number(problem.get("scale", 1))
    scaled = scale_and_mask(rows, scale, mask_predicate(mask))
    parts = [softmax_row(row, arith) for row in scaled]
    result = {"scaled": scaled,
              "max": [p[0] for p in parts], "exp": [p[1] for p in parts],
              "sum": [p[2] for p in parts], "weights": [p[3] for p in parts]}
    if is_vector:
        result = {key: value[0] for key, value in result.items()}
    return result


def run_weighted_sum(problem, arith):
    return {"output": matmul(to_numbers(problem["weights"], arith),
                             to_numbers(problem["v"], arith), arith)}


RUNNERS = {"scaledDotProduct": run_scaled_dot_product, "multiHead": run_multi_head,
           "softmax": run_softmax, "weightedSum": run_weighted_sum}


def run(problem, arith):
    return RUNNERS[problem["kind"]](problem, arith)


# ---- Cross-check, rounding, errata ----

def cross_check(exact, approx, path):
    """Fails loudly if the float run disagrees with the decimal one."""
    if isinstance(exact, dict):
        for key in exact:
            cross_check(exact[key], approx[key], f"{path}.{key}")
    elif isinstance(exact, list):
        assert len(exact) == len(approx), path
        for i, (e, a) in enumerate(zip(exact, approx)):
            cross_check(e, a, f"{path}[{i}]")
    elif exact is MINUS_INFINITY:
        assert approx is MINUS_INFINITY, path
    else:
        e = float(exact)
        assert abs(e - approx) <= CROSS_CHECK_TOLERANCE * max(1.0, abs(e)), \
            f"{path}: decimal {e!r} vs float {approx!r}"


def round_significant(value):
    """The value to 17 significant digits, trailing zeros dropped."""
    rounded = Context(prec=SIGNIFICANT_DIGITS, rounding=ROUND_HALF_EVEN).plus(value)
    return rounded.normalize() if rounded != 0 else Decimal(0)


def round_tree(value):
    if isinstance(value, dict):
        return {key: round_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [round_tree(item) for item in value]
    if value is MINUS_INFINITY:
        return value
    return round_significant(value)


def tolerance_for(decimals):
    """Half a unit in the last printed digit, plus slack for exact ties."""
    return Decimal(5) * Decimal(10) ** (-decimals - 1) + Decimal("1e-12")


def decimals_at(decimals, index):
    """A printed-decimals spec (a number or nested lists) at an index."""
    for i in index:
        if not isinstance(decimals, list):
            break
        decimals = decimals[i]
    return decimals


def find_errata(printed, exact, decimals, field, notes, index=()):
    """Every printed number farther from the exact one than its rounding.
    notes: {field or "field[row]": why it differs}."""
    if isinstance(printed, list):
        assert isinstance(exact, list) and len(exact) == len(printed), field
        found = []
        for i, (p, e) in enumerate(zip(printed, exact)):
            found += find_errata(p, e, decimals, field, notes, index + (i,))
        return found
    digits = decimals_at(decimals, index)
    if printed is MINUS_INFINITY or exact is MINUS_INFINITY:
        if printed is exact:
            return []
        return [{"field": field, "index": list(index), "printed": printed,
                 "exact": exact, "note": notes.get(field, "masked entry disagrees")}]
    p = Decimal(str(printed))
    if abs(p - exact) <= tolerance_for(digits):
        return []
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    note = notes.get(f"{field}[{index[0]}]" if index else field, notes.get(field, ""))
    return [{"field": field, "index": list(index), "printed": p,
             "exact": round_significant(exact), "exactRounded": rounded,
             "note": note}]


def flatten_printed(printed, prefix=""):
    """printed {key: tensor | [{key: tensor}]} -> [(dotted field, tensor)]."""
    fields = []
    for key, value in printed.items():
        if key == "notes":
            continue
        name = prefix + key
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for h, item in enumerate(value):
                fields += flatten_printed(item, f"{name}.{h}.")
        else:
            fields.append((name, value))
    return fields


def lookup(tree, dotted):
    for part in dotted.split("."):
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree


def make_vector(vid, tutorial, section, description, problem, printed,
                decimals, notes=None, derive=None):
    """One vector: exact results, derived values for extra printed keys,
    and the errata of every printed number."""
    exact = run(problem, DecimalArithmetic)
    cross_check(exact, run(problem, FloatArithmetic), vid)
    derived = derive(exact, problem) if derive else {}
    reference = dict(exact, **derived)
    errata = []
    for field, value in flatten_printed(printed):
        field_decimals = decimals[field] if isinstance(decimals, dict) else decimals
        errata += find_errata(value, lookup(reference, field), field_decimals,
                              field, notes or {})
    vector = {"id": vid, "tutorial": tutorial, "section": section,
              "description": description, "input": problem,
              "expected": round_tree(exact)}
    if derived:
        vector["derived"] = round_tree(derived)
    vector.update(printed=printed, printedDecimals=decimals, errata=errata)
    return vector


# ---- The vectors ----

def identity(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


CAT_SAT_MAT = [["1.0", "0.5", "0.2", "0.8"],
               ["0.3", "0.9", "0.1", "0.4"],
               ["0.6", "0.2", "0.7", "0.3"]]


def decimals_tree(value):
    """Input literals as Decimals (exact, as written in the tutorial)."""
    if isinstance(value, list):
        return [decimals_tree(item) for item in value]
    if isinstance(value, (bool, type(None))):
        return value
    return Decimal(str(value))


def cat_sat_mat_extras(exact, problem):
    """Row 0 of the walkthrough: exp, sum and the three weighted value rows."""
    weights, scaled, v = exact["weights"], exact["scaled"], decimals_tree(problem["v"])
    return {"exp_row0": [x.exp() for x in scaled[0]],
            "sum_row0": sum((x.exp() for x in scaled[0]), Decimal(0)),
            "terms_row0": [[weights[0][j] * value for value in v[j]]
                           for j in range(len(v))],
            "weightsPercent": [[w * 100 for w in row] for row in weights]}


def vectors():
    out = []

    # ---- Tutorial 000 ----
    out.append(make_vector(
        "t000-three-tokens-dk2", T000, "Mathematical Example",
        "3 tokens with d_k = 2 and d_v = 3: scores, scaling by 1/sqrt(2), "
        "row softmax and the weighted sum of V",
        {"kind": "scaledDotProduct",
         "q": decimals_tree([[1, 0], [0, 1], [1, 1]]),
         "k": decimals_tree([[1, 0], [0, 1], [1, 1]]),
         "v": decimals_tree([[1, 2, 3], [4, 5, 6], [7, 8, 9]])},
        {"scores": decimals_tree([[1, 0, 1], [0, 1, 1], [1, 1, 2]]),
         "scaled": decimals_tree([["0.71", "0.00", "0.71"], ["0.00", "0.71", "0.71"],
                                  ["0.71", "0.71", "1.41"]]),
         "weights": decimals_tree([["0.38", "0.24", "0.38"], ["0.21", "0.39", "0.39"],
                                   ["0.26", "0.26", "0.48"]]),
         "output": decimals_tree([["4.3", "5.3", "6.3"], ["5.5", "6.5", "7.5"],
                                  ["5.7", "6.7", "7.7"]]),
         "sqrt_dk": Decimal("1.414"),
         "notes": "sqrt(d_k) = sqrt(2) is printed as 1.414; the printed weights' "
                  "row 1 sums to 0.99 although the text says each row sums to 1."},
        {"scores": 0, "scaled": 2, "weights": 2, "output": 1, "sqrt_dk": 3},
        notes={"weights": "the softmax of the printed scaled scores gives other "
                          "weights (row 0 is [0.40, 0.20, 0.40])",
               "output": "follows from the wrong weights; with the exact weights "
                         "row 0 is exactly [4, 5, 6]"},
        derive=lambda exact, problem: {"sqrt_dk": Decimal(2).sqrt()}))

    # ---- Tutorial 001 ----
    cat_notes = {
        "scores": "X[1]·X[2] = 0.18 + 0.18 + 0.07 + 0.12 = 0.55, printed 0.65",
        "scaled": "half of the wrong 0.65 score; 0.55 / 2 = 0.275",
        "weights": "rows 1 and 2 use the wrong 0.65 score",
        "weightsPercent": "percentages in the comments beside the weights",
        "sum_row0": "2.6248 + 1.7246 + 1.7160 = 6.0654",
        "output": "rows 1 and 2 follow from the wrong weights",
        "output[0]": "the sum of the products of the rounded weights; the exact "
                     "weights give [0.688, 0.529, 0.313, 0.545]",
        "terms_row0": "products of the printed (rounded) weights with V",
        "heads.0.scores": "X[1]·X[2] = 0.55, printed 0.65",
        "heads.0.scaled": "half of the wrong 0.65 score",
        "heads.0.weights": "rows 1 and 2 use the wrong 0.65 score",
        "heads.0.output": "rows 1 and 2 follow from the wrong weights",
        "heads.0.output[0]": "the sum of the products of the rounded weights; "
                             "the exact weights give [0.688, 0.529, 0.313, 0.545]",
    }
    printed_scores = decimals_tree([["1.93", "1.09", "1.08"], ["1.09", "1.07", "0.65"],
                                    ["1.08", "0.65", "0.98"]])
    printed_scaled = decimals_tree([["0.965", "0.545", "0.540"], ["0.545", "0.535", "0.325"],
                                    ["0.540", "0.325", "0.490"]])
    printed_weights = decimals_tree([["0.433", "0.284", "0.283"], ["0.384", "0.377", "0.239"],
                                     ["0.389", "0.269", "0.342"]])
    printed_output = decimals_tree([["0.688", "0.530", "0.313", "0.546"],
                                    ["0.644", "0.529", "0.279", "0.538"],
                                    ["0.666", "0.477", "0.330", "0.543"]])
    x = decimals_tree(CAT_SAT_MAT)
    out.append(make_vector(
        "t001-cat-sat-mat", T001, "Step-by-Step Numeric Example",
        "\"cat sat mat\": Q = K = V = X (3 tokens, d_k = 4), every step of the "
        "walkthrough including row 0's exponentials and weighted value rows",
        {"kind": "scaledDotProduct", "q": x, "k": x, "v": x,
         "tokens": ["cat", "sat", "mat"]},
        {"scores": printed_scores, "scaled": printed_scaled,
         "exp_row0": decimals_tree(["2.625", "1.725", "1.716"]),
         "sum_row0": Decimal("6.066"),
         "weights": printed_weights,
         "weightsPercent": decimals_tree([[43, 28, 28], [38, 38, 24], [39, 27, 34]]),
         "terms_row0": decimals_tree([["0.433", "0.217", "0.087", "0.347"],
                                      ["0.085", "0.256", "0.028", "0.114"],
                                      ["0.170", "0.057", "0.198", "0.085"]]),
         "output": printed_output,
         "notes": "exp_row0 and sum_row0 are the worked softmax of row 0; "
                  "terms_row0[j] is weights[0][j] × V[j] from the worked output[0]; "
                  "weightsPercent are the percentages in the comments."},
        {"scores": 2, "scaled": 3, "exp_row0": 3, "sum_row0": 3, "weights": 3,
         "weightsPercent": 0, "terms_row0": 3, "output": 3},
        notes=cat_notes, derive=cat_sat_mat_extras))

    out.append(make_vector(
        "t001-cat-sat-mat-multihead", T001, "Step-by-Step Numeric Example",
        "the same walkthrough from X through identity projections W_Q = W_K = "
        "W_V = W_O = I4 as multi-head attention with one head",
        {"kind": "multiHead", "x": x, "numHeads": 1,
         "wq": decimals_tree(identity(4)), "wk": decimals_tree(identity(4)),
         "wv": decimals_tree(identity(4)), "wo": decimals_tree(identity(4)),
         "tokens": ["cat", "sat", "mat"]},
        {"q": x, "k": x, "v": x,
         "heads": [{"scores": printed_scores, "scaled": printed_scaled,
                    "weights": printed_weights, "output": printed_output}],
         "output": printed_output,
         "notes": "The tutorial computes Q = X @ W_Q.T; with identity weights "
                  "that equals X @ W_Q (the engine's layout). It has no W_O; "
                  "W_O = I makes the final output the head output."},
        {"q": 1, "k": 1, "v": 1, "heads.0.scores": 2, "heads.0.scaled": 3,
         "heads.0.weights": 3, "heads.0.output": 3, "output": 3},
        notes=cat_notes))

    out.append(make_vector(
        "t001-causal-row-position-2", T001, "The Causal Mask",
        "the scores of position 2 with its future key (index 3) masked out",
        {"kind": "softmax", "x": decimals_tree(["0.5", "0.8", "0.3", "0.9"]),
         "mask": [True, True, True, False]},
        {"scaled": decimals_tree(["0.5", "0.8", "0.3", None]),
         "weights": decimals_tree(["0.28", "0.41", "0.31", "0.00"]),
         "notes": "scaled is the printed 'after masking' row (-inf as null)."},
        {"scaled": 1, "weights": 2},
        notes={"weights": "exp(0.5), exp(0.8), exp(0.3) normalised give "
                          "[0.32, 0.43, 0.26]"}))

    out.append(make_vector(
        "t001-softmax-large-gap", T001, "Why Scale by $\\sqrt{d_k}$?",
        "softmax of [100, 1, 1, 1]: one entry takes all the weight",
        {"kind": "softmax", "x": decimals_tree([100, 1, 1, 1])},
        {"weights": decimals_tree(["1.0", "0.0", "0.0", "0.0"])},
        {"weights": 1}))

    out.append(make_vector(
        "t001-softmax-small-gap", T001, "Why Scale by $\\sqrt{d_k}$?",
        "softmax of [2, 0.5, 0.5, 0.5]: a softer distribution",
        {"kind": "softmax", "x": decimals_tree(["2", "0.5", "0.5", "0.5"])},
        {"weights": decimals_tree(["0.5", "0.17", "0.17", "0.17"]),
         "notes": "the first weight is printed with one decimal, the others with two."},
        {"weights": [1, 2, 2, 2]},
        notes={"weights": "exp(1.5) = 4.48 against three 1s: [0.60, 0.13, 0.13, 0.13]"}))

    out.append(make_vector(
        "t001-visualization-softmax", T001, "Information Flow in Self-Attention",
        "the row softmax of the 3x3 scaled scores drawn in the diagram",
        {"kind": "softmax", "x": decimals_tree([["0.8", "0.3", "0.2"],
                                                ["0.2", "0.7", "0.3"],
                                                ["0.1", "0.6", "0.5"]])},
        {"scaled": decimals_tree([[".8", ".3", ".2"], [".2", ".7", ".3"], [".1", ".6", ".5"]]),
         "weights": decimals_tree([[".50", ".30", ".20"], [".20", ".50", ".30"],
                                   [".15", ".45", ".40"]])},
        {"scaled": 1, "weights": 2},
        notes={"weights": "the diagram's probabilities are not the softmax of "
                          "the scores drawn above them"}))

    # ---- Tutorial 002 ----
    values_4x3 = decimals_tree([["1.0", "2.0", "3.0"], ["4.0", "5.0", "6.0"],
                                ["7.0", "8.0", "9.0"], ["2.0", "1.0", "0.0"]])
    out.append(make_vector(
        "t002-causal-scores-4x4", T002, "Step 4: Apply Softmax",
        "a 4x4 causal score matrix (no scaling; masked cells given as 0) and its "
        "row softmax, then the value rows of the step 5 example",
        {"kind": "scaledDotProduct",
         "scores": decimals_tree([["2.1", 0, 0, 0], ["1.5", "3.2", 0, 0],
                                  ["0.8", "1.1", "2.5", 0], ["0.3", "0.9", "1.2", "2.8"]]),
         "v": values_4x3, "mask": "causal", "scale": False},
        {"scaled": decimals_tree([["2.1", None, None, None], ["1.5", "3.2", None, None],
                                  ["0.8", "1.1", "2.5", None], ["0.3", "0.9", "1.2", "2.8"]]),
         "weights": decimals_tree([["1.00", "0.00", "0.00", "0.00"],
                                   ["0.15", "0.85", "0.00", "0.00"],
                                   ["0.17", "0.23", "0.60", "0.00"],
                                   ["0.11", "0.15", "0.21", "0.53"]]),
         "output_row2": decimals_tree(["5.29", "6.29", "7.29"]),
         "notes": "scaled is the printed 'before softmax' matrix (-inf as null). "
                  "Step 5 multiplies printed weights row 2 by the four value rows "
                  "given here as v; output_row2 is its printed result."},
        {"scaled": 1, "weights": 2, "output_row2": 2},
        notes={"weights[2]": "not the softmax of its scores, which is "
                             "[0.13, 0.17, 0.70, 0]",
               "weights[3]": "not the softmax of its scores, which is "
                             "[0.06, 0.10, 0.14, 0.70]",
               "output_row2": "right for the printed weights, wrong for the exact ones"},
        derive=lambda exact, problem: {"output_row2": exact["output"][2]}))

    out.append(make_vector(
        "t002-weighted-sum-row-2", T002, "Step 5: Apply Attention to Values",
        "the printed weights [0.17, 0.23, 0.60, 0] times four value rows",
        {"kind": "weightedSum",
         "weights": decimals_tree([["0.17", "0.23", "0.60", "0.00"]]),
         "v": values_4x3},
        {"terms": decimals_tree([[["0.17", "0.34", "0.51"], ["0.92", "1.15", "1.38"],
                                  ["4.20", "4.80", "5.40"], ["0.00", "0.00", "0.00"]]]),
         "output": decimals_tree([["5.29", "6.29", "7.29"]]),
         "notes": "terms[0][j] is weights[0][j] × v[j], the printed intermediate rows."},
        {"terms": 2, "output": 2},
        derive=lambda exact, problem: {"terms": [[
            [w * value for value in row]
            for w, row in zip(decimals_tree(problem["weights"])[0],
                              decimals_tree(problem["v"]))]]}))

    out.append(make_vector(
        "t002-softmax-1-2-3", T002, "The Softmax Saturation Problem",
        "softmax of small values [1, 2, 3]: a spread distribution",
        {"kind": "softmax", "x": decimals_tree(["1.0", "2.0", "3.0"])},
        {"weights": decimals_tree(["0.09", "0.24", "0.67"])},
        {"weights": 2}))

    out.append(make_vector(
        "t002-softmax-10-20-30", T002, "The Softmax Saturation Problem",
        "softmax of large values [10, 20, 30]: almost one-hot",
        {"kind": "softmax", "x": decimals_tree(["10.0", "20.0", "30.0"])},
        {"weights": decimals_tree(["0.00", "0.00", "1.00"])},
        {"weights": 2}))

    dk64_scores = decimals_tree(["-15.2", "8.3", "-12.1", "18.7"])
    out.append(make_vector(
        "t002-dk64-unscaled", T002, "Empirical Demonstration",
        "d_k = 64, unscaled score row [-15.2, 8.3, -12.1, 18.7]: saturated softmax",
        {"kind": "softmax", "x": dk64_scores},
        {"weights": decimals_tree(["0.00", "0.00", "0.00", "1.00"])},
        {"weights": 2}))

    out.append(make_vector(
        "t002-dk64-scaled", T002, "Empirical Demonstration",
        "the same score row divided by sqrt(64) = 8 before the softmax",
        {"kind": "softmax", "x": dk64_scores, "scale": Decimal("0.125")},
        {"scaled": decimals_tree(["-1.9", "1.0", "-1.5", "2.3"]),
         "weights": decimals_tree(["0.03", "0.15", "0.04", "0.78"])},
        {"scaled": 1, "weights": 2},
        notes={"weights": "the softmax of [-1.9, 1.04, -1.51, 2.34] is "
                          "[0.01, 0.21, 0.02, 0.76]"}))

    before = [["0.25", "0.25", "0.25", "0.25"], ["0.30", "0.20", "0.40", "0.10"],
              ["0.15", "0.35", "0.20", "0.30"], ["0.10", "0.30", "0.25", "0.35"]]
    logs = [[round_significant(Decimal(w).ln()) for w in row] for row in before]
    causal_4 = [[j <= i for j in range(4)] for i in range(4)]
    out.append(make_vector(
        "t002-causal-renormalisation", T002, "Attention Weights with Causal Mask",
        "renormalising the allowed weights of each row: softmax of ln(weights "
        "before masking) with a causal mask",
        {"kind": "softmax", "x": logs, "mask": causal_4},
        {"weightsBefore": decimals_tree(before),
         "weights": decimals_tree([["1.00", "0.00", "0.00", "0.00"],
                                   ["0.60", "0.40", "0.00", "0.00"],
                                   ["0.21", "0.49", "0.30", "0.00"],
                                   ["0.10", "0.30", "0.25", "0.35"]]),
         "notes": "x holds ln of the printed 'before masking' weights (17 digits); "
                  "the softmax of logarithms renormalises each row over its "
                  "allowed keys. weightsBefore is that printed table."},
        {"weightsBefore": 2, "weights": 2},
        notes={"weights": "row 2 renormalised: 0.15, 0.35, 0.20 over 0.70 are "
                          "0.214, 0.500, 0.286"},
        derive=lambda exact, problem: {"weightsBefore": decimals_tree(before)}))

    practical_scores = decimals_tree([["2.1", "-0.5", "1.3", "-1.8"],
                                      ["0.7", "3.2", "-0.9", "2.1"]])
    out.append(make_vector(
        "t002-practical-example-rows-0-1", T002, "Practical Example",
        "the printed score rows 0 and 1 of batch 0, d_k = 8, causal mask",
        {"kind": "scaledDotProduct", "scores": practical_scores, "dk": 8,
         "mask": "causal"},
        {"scores": practical_scores,
         "scaledBeforeMask": decimals_tree([["0.74", "-0.18", "0.46", "-0.64"],
                                            ["0.25", "1.13", "-0.32", "0.74"]]),
         "weights": decimals_tree([["1.00", "0.00", "0.00", "0.00"],
                                   ["0.28", "0.72", "0.00", "0.00"]]),
         "notes": "The tutorial prints the scaled scores before adding the mask "
                  "(scaledBeforeMask = scores / sqrt(8)); the engine's scaled has "
                  "-inf in masked cells. Its weights rows 2 and 3, [0.20, 0.15, "
                  "0.65, 0.00] and [0.15, 0.25, 0.18, 0.42], have no printed "
                  "scores and cannot be checked."},
        {"scores": 1, "scaledBeforeMask": 2, "weights": 2},
        notes={"weights": "softmax of [0.2475, 1.1314] is [0.29, 0.71]"},
        derive=lambda exact, problem: {
            "scores": decimals_tree(problem["scores"]),
            "scaledBeforeMask": [[s / Decimal(8).sqrt() for s in row]
                                 for row in decimals_tree(problem["scores"])]}))

    # ---- Tutorial 003 ----
    big = decimals_tree([100, 95, 5, 3])
    out.append(make_vector(
        "t003-softmax-unscaled", T003, "Why Scaling?",
        "softmax of the unscaled scores [100, 95, 5, 3]",
        {"kind": "softmax", "x": big},
        {"weights": decimals_tree(["0.88", "0.12", "0", "0"])},
        {"weights": [2, 2, 0, 0]},
        notes={"weights": "a gap of 5 gives exp(-5) = 0.0067: [0.993, 0.007, 0, 0]"}))

    out.append(make_vector(
        "t003-softmax-scaled-sqrt64", T003, "Why Scaling?",
        "the same scores divided by sqrt(64) = 8 before the softmax",
        {"kind": "softmax", "x": big, "scale": Decimal("0.125")},
        {"scaled": decimals_tree(["12.5", "11.9", "0.63", "0.38"]),
         "weights": decimals_tree(["0.55", "0.40", "0.02", "0.01"])},
        {"scaled": [1, 1, 2, 2], "weights": 2},
        notes={"weights": "a gap of 0.625 gives [0.65, 0.35, 0.000005, 0.000004]"}))
    return out


# ---- Claims that are not computations ----

def claim(cid, tutorial, section, text, printed, exact, holds, note="", data=None):
    entry = {"id": cid, "tutorial": tutorial, "section": section, "claim": text}
    if data is not None:
        entry["data"] = data
    entry.update(printed=printed, exact=exact, holds=holds)
    if note:
        entry["note"] = note
    return entry


def row_sums(rows):
    return [sum(decimals_tree(row), Decimal(0)) for row in rows]


def sums_claim(cid, tutorial, section, text, rows, decimals=2, note=""):
    sums = row_sums(rows)
    ok = all(abs(s - 1) <= tolerance_for(decimals) for s in sums)
    return claim(cid, tutorial, section, text, 1, sums, ok, note,
                 data=decimals_tree(rows))


def claims():
    c = []
    c.append(sums_claim(
        "c000-printed-weights-rows-sum-to-one", T000, "Step 3: Apply Softmax (row-wise)",
        "each row of the printed weights sums to 1.0",
        [["0.38", "0.24", "0.38"], ["0.21", "0.39", "0.39"], ["0.26", "0.26", "0.48"]],
        note="the second row of the printed weights, 0.21 + 0.39 + 0.39, sums to 0.99"))
    c.append(claim(
        "c000-sqrt-2", T000, "Step 2: Scale by √d_k = √2 ≈ 1.414",
        "sqrt(2) ≈ 1.414", Decimal("1.414"), round_significant(Decimal(2).sqrt()), True))

    c.append(sums_claim(
        "c001-sat-lookup-weights-sum-to-one", T001, "Visual Example",
        "the attention scores of \"sat\" over The/cat/sat/on/the/mat form a distribution",
        [["0.05", "0.60", "0.20", "0.10", "0.03", "0.02"]],
        note="\"cat\" (0.60) has the largest weight, as the text says"))
    c.append(claim(
        "c001-sqrt-dk-4", T001, "Step 3: Scale by sqrt(d_k)",
        "d_k = 4 gives sqrt(d_k) = 2.0", Decimal("2.0"), Decimal(2), True))
    c.append(claim(
        "c001-head-dim", T001, "Numeric Example",
        "embed_dim 128 split over 4 heads gives head_dim 32; 4 heads of 32 "
        "concatenate back to 128", [32, 128], [128 // 4, 4 * 32], True))
    c.append(claim(
        "c001-causal-mask-4", T001, "The Causal Mask",
        "the causal mask for length 4 lets position i see positions 0..i",
        [[True, False, False, False], [True, True, False, False],
         [True, True, True, False], [True, True, True, True]],
        [[j <= i for j in range(4)] for i in range(4)], True))
    c.append(claim(
        "c001-dot-product-variance", T001, "Why Scale by $\\sqrt{d_k}$?",
        "for unit-variance independent components the dot product's variance "
        "is d_k (64 and 512)", [64, 512], [64, 512], True))

    c.append(sums_claim(
        "c002-causal-4x4-printed-rows-sum-to-one", T002, "Step 4: Apply Softmax",
        "each row of the printed 4x4 causal weights sums to 1",
        [["1.00", "0.00", "0.00", "0.00"], ["0.15", "0.85", "0.00", "0.00"],
         ["0.17", "0.23", "0.60", "0.00"], ["0.11", "0.15", "0.21", "0.53"]],
        note="the rows sum to 1 although the third and fourth rows are not the softmax of their scores"))
    c.append(claim(
        "c002-value-3-dominates", T002, "Step 5: Apply Attention to Values",
        "the output row is dominated by Value₃ because its weight is the largest",
        Decimal("0.60"),
        round_significant(run_scaled_dot_product(
            {"scores": decimals_tree([["0.8", "1.1", "2.5", 0]]),
             "mask": [[True, True, True, False]], "scale": False},
            DecimalArithmetic)["weights"][0][2]), True,
        note="also true of the exact weights (0.6996)"))
    c.append(sums_claim(
        "c002-before-masking-rows-sum-to-one", T002, "Attention Weights with Causal Mask",
        "each row of the 'before masking' weights sums to 1",
        [["0.25", "0.25", "0.25", "0.25"], ["0.30", "0.20", "0.40", "0.10"],
         ["0.15", "0.35", "0.20", "0.30"], ["0.10", "0.30", "0.25", "0.35"]]))
    c.append(sums_claim(
        "c002-practical-weights-rows-sum-to-one", T002, "Practical Example",
        "'Row sums: [1, 1, 1, 1]' for the printed weights of batch 0",
        [["1.00", "0.00", "0.00", "0.00"], ["0.28", "0.72", "0.00", "0.00"],
         ["0.20", "0.15", "0.65", "0.00"], ["0.15", "0.25", "0.18", "0.42"]]))
    c.append(claim(
        "c002-padding-mask", T002, "Padding Masking",
        "[\"Hello\", \"world\", <pad>, <pad>] gives the additive mask [0, 0, -∞, -∞] "
        "for every row: key length 2", [0, 0, None, None],
        [0 if j < 2 else None for j in range(4)], True))
    c.append(claim(
        "c002-std-dk-64", T002, "Mathematical Intuition",
        "for d_k = 64 the dot product's standard deviation is about 8 unscaled "
        "and 1 after dividing by sqrt(d_k)", [8, 1], [8, 1], True))
    c.append(claim(
        "c002-score-ranges", T002, "The Problem: Variance Growth",
        "dot products 'might be' in [-25, 25] for d_k = 64 and [-70, 70] for "
        "d_k = 512: about three standard deviations, 3·sqrt(d_k)",
        [25, 70], [Decimal(24), round_significant(3 * Decimal(512).sqrt())], True))
    two_sided_3_sigma = Decimal(str(math.erfc(3 / math.sqrt(2))))
    c.append(claim(
        "c002-values-often-exceed-24", T002, "Mathematical Intuition",
        "for d_k = 64 unscaled values 'often exceed [-24, 24]'",
        "often", round_significant(two_sided_3_sigma), False,
        note="24 is 3 standard deviations: under a normal approximation only "
             "about 0.27% of values lie outside"))
    c.append(claim(
        "c002-memory-T1024-B32", T002, "Space Complexity: O(n²)",
        "32 × 1024 × 1024 × 4 bytes = 128 MB of attention weights",
        128, 32 * 1024 * 1024 * 4 // 2**20, True,
        note="134,217,728 bytes: 128 MiB (134.2 MB in powers of ten)"))
    c.append(claim(
        "c002-scaling-table", T002, "Scaling Challenges",
        "512² = 262,144; 1024² = 1,048,576 (4×); 2048² = 4,194,304 (16×)",
        [262144, 1048576, 4, 4194304, 16],
        [512**2, 1024**2, 1024**2 // 512**2, 2048**2, 2048**2 // 512**2], True))
    memory = 32 * 512**2 * 8 * 12 * 4
    c.append(claim(
        "c002-attention-memory-estimate", T002, "Practical Implications",
        "32 × 512² × 8 heads × 12 layers × 4 bytes ≈ 6.4 GB (the code prints "
        "attention_memory / 1e9 GB)",
        Decimal("6.4"), Decimal(memory) / Decimal(10**9), False,
        note=f"{memory:,} bytes = 3.22 GB (3.0 GiB): half the printed value; "
             "6.4 GB would need 8-byte numbers or 24 layers"))
    c.append(claim(
        "c002-practical-shapes", T002, "Practical Example",
        "Q, K, V of shape (2, 4, 8) give scores of shape (2, 4, 4) and output (2, 4, 8)",
        [[2, 4, 4], [2, 4, 8]], [[2, 4, 4], [2, 4, 8]], True))

    c.append(claim(
        "c003-head-dim", T003, "24.11 Code Example: Complete Transformer Block",
        "d_model 512 with 8 heads gives d_k = 64; x (32, 100, 512) keeps its shape",
        [64, [32, 100, 512]], [512 // 8, [32, 100, 512]], True))
    c.append(claim(
        "c003-plot-shape", T003, "Visualizing Attention Weights",
        "5 input tokens and 3 output tokens give attention weights of shape (3, 5)",
        [3, 5], [3, 5], True))
    c.append(claim(
        "c003-causal-mask-4", T003, "2. Decoder Self-Attention (Masked)",
        "torch.tril(ones(4, 4)) is the causal mask for length 4",
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]],
        [[int(j <= i) for j in range(4)] for i in range(4)], True))
    c.append(claim(
        "c003-self-attention-code-scale", T003, "24.4 Self-Attention (Intra-Attention)",
        "the SelfAttention code scales by 1/sqrt(embed_size) while the formula "
        "(and the other implementations) use 1/sqrt(d_k) with d_k = head_dim",
        "energy / (self.embed_size ** (1/2))", "energy / head_dim ** 0.5", False,
        note="a code inconsistency, not a printed number; with 8 heads of 64 the "
             "scores are divided by 22.6 instead of 8"))

    c.append(sums_claim(
        "c004-it-row-sums-to-one", T004, "Self-Attention: Attending to Yourself",
        "the 11 weights of \"it\" over The/animal/didn't/cross/the/street/because/"
        "it/was/too/tired form a distribution, largest on \"animal\"",
        [["0.02", "0.45", "0.03", "0.02", "0.01", "0.08", "0.03", "0.30", "0.02",
          "0.02", "0.02"]],
        note="11 tokens, 11 weights; \"animal\" 0.45 is the largest, \"it\" itself 0.30"))
    c.append(sums_claim(
        "c004-weights-table-rows-sum-to-one", T004, "Step 2: Scale and Softmax",
        "each row of the 4x4 weights table sums to 1.0",
        [["0.1", "0.6", "0.2", "0.1"], ["0.3", "0.3", "0.3", "0.1"],
         ["0.05", "0.8", "0.1", "0.05"], ["0.2", "0.2", "0.2", "0.4"]], decimals=1,
        note="the outputs of the first two tokens in step 3 use the first two rows of this table"))
    c.append(claim(
        "c004-projection-shapes", T004, "Computing Q, K, V",
        "(4, 512) @ (512, 64) gives (4, 64); Q @ K.T gives (4, 4); weights @ V "
        "gives (4, 64)", [[4, 64], [4, 4], [4, 64]], [[4, 64], [4, 4], [4, 64]], True))
    c.append(claim(
        "c004-multihead-shapes", T004, "Matrix Dimensions with Multi-Head",
        "d_k = d_v = 512 / 8 = 64; concatenating 8 heads of (4, 64) gives (4, 512); "
        "W_O (512, 512) keeps (4, 512)", [64, [4, 512], [4, 512]],
        [512 // 8, [4, 64 * 8], [4, 512]], True))
    return c


# ---- Output ----

def format_number(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    value = value.normalize() if value != 0 else Decimal(0)
    exponent = value.adjusted()
    text = f"{value:f}" if -7 <= exponent < 21 else f"{value:e}".replace("E", "e")
    return text


def dump(value, indent=0):
    """JSON with one line per matrix row and numbers written exactly."""
    pad = "  " * indent
    if value is None or isinstance(value, (bool, int, Decimal)):
        return "null" if value is None else format_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        if "field" in value:  # an erratum: one line
            return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}"
                                   for k, v in value.items()) + "}"
        items = [f"{pad}  {json.dumps(k)}: {dump(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
    inline = "[" + ", ".join(dump(item, indent + 1) for item in value) + "]"
    if "\n" not in inline and len(inline) + len(pad) <= 100:
        return inline
    items = [pad + "  " + dump(item, indent + 1) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def errata_table(all_vectors):
    lines = ["| vector | field | index | printed | exact |",
             "|---|---|---|---|---|"]
    for vector in all_vectors:
        for e in vector["errata"]:
            exact = "-inf" if e["exact"] is None else format_number(e["exact"])
            lines.append(f"| {vector['id']} | {e['field']} | {e['index']} | "
                         f"{format_number(e['printed'])} | {exact} |")
    return "\n".join(lines)


def replace_between(text, start, end, body):
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def main():
    all_vectors = vectors()
    for name, content in (("tutorials.json", all_vectors), ("claims.json", claims())):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            f.write(dump(content) + "\n")
    readme = os.path.join(HERE, "README.md")
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        text = replace_between(text, "<!-- errata:start -->", "<!-- errata:end -->",
                               errata_table(all_vectors))
        with open(readme, "w", encoding="utf-8") as f:
            f.write(text)
    count = sum(len(v["errata"]) for v in all_vectors)
    print(f"{len(all_vectors)} vectors, {count} errata")


if __name__ == "__main__":
    main()
