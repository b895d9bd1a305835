"""attn_check_* through ctypes: a worked example's printed numbers against the exact ones.

The same input as the JS API's attn.check and build/attn check: printed
tables by result name ({"weights": [[...]], "output_row2": [...],
"heads": [{"scores": ...}]}), None or -inf for a masked −∞, strings (notes)
skipped; decimals one number for all, or by key a number or nested lists
shaped like the numbers (otherwise each number's shortest form says).
"""

import ctypes
import json
import math
import numbers

import numpy as np

from ._engine import ATTN_ERR_INPUT, ATTN_ERR_OPTION, ATTN_OK, AttentionError, _Problem, c_text, formats, formatted

REPORT_FORMATS = ("json", "text", "markdown", "latex")


def _describe(value):
    return f"{type(value).__name__} {value!r:.40}"


def _printed_leaf(value, path):
    """A printed number: None or -inf is a masked −∞; NaN and non-numbers are refused."""
    if value is None:
        return -math.inf
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise AttentionError(ATTN_ERR_INPUT, f"{path}: expected a number, got {_describe(value)}")
    return float(value)


def _decimals_leaf(value, path):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or not 0 <= value <= 17:
        raise AttentionError(ATTN_ERR_INPUT, f"{path}: expected a whole number of decimals from 0 to 17, "
                                             f"got {_describe(value)}")
    return int(value)


# Levels of nesting a printed table may have, as the JS API takes it: deeper
# is refused before Python's recursion limit (a RecursionError) is reached.
_MAX_NESTING = 3


def _flatten(value, path, leaf, root=None, depth=0):
    """(dims, entries) of nested lists whose rows have one length each, or of one leaf."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return [], [leaf(value, path)]
    if depth == _MAX_NESTING:
        raise AttentionError(ATTN_ERR_INPUT, f"{root}: expected at most {_MAX_NESTING} levels of nesting")
    if not value:
        raise AttentionError(ATTN_ERR_INPUT, f"{path}: must not be empty")
    parts = [_flatten(entry, f"{path}[{index}]", leaf, root or path, depth + 1) for index, entry in enumerate(value)]
    dims = parts[0][0]
    for index, (inner, _) in enumerate(parts):
        if inner != dims:
            raise AttentionError(ATTN_ERR_INPUT, f"{path}[{index}]: expected the shape {dims or 'of one number'} "
                                                 f"of {path}[0], got {inner or 'one number'}")
    return [len(value), *dims], [entry for _, entries in parts for entry in entries]


def _tables(printed):
    """(key, plain name, value) for each printed table; a head's tables as heads.H.name."""
    if not isinstance(printed, dict):
        raise AttentionError(ATTN_ERR_INPUT, f"printed: expected a dict of printed tables by result name, "
                                             f"got {_describe(printed)}")
    for key, value in printed.items():
        if key == "heads" and isinstance(value, (list, tuple)):
            for h, head in enumerate(value):
                if not isinstance(head, dict):
                    raise AttentionError(ATTN_ERR_INPUT, f"printed.heads[{h}]: expected a dict of that head's "
                                                         f"tables, got {_describe(head)}")
                for name, table in head.items():
                    yield f"heads.{h}.{name}", name, table
        else:
            yield key, key, value


def _decimals_of(decimals, key, plain, count):
    """The decimals of each of a table's count numbers, or None when none are given."""
    if decimals is None:
        return None
    if isinstance(decimals, dict):
        given = decimals.get(key, decimals.get(plain))
        if given is None:
            return None
    else:
        given = decimals
    path = f"decimals.{key}"
    _, values = _flatten(given, path, _decimals_leaf)
    if len(values) not in (1, count):
        raise AttentionError(ATTN_ERR_INPUT, f"{path}: expected one number or {count} (one per printed number), "
                                             f"got {len(values)}")
    return values * count if len(values) == 1 else values


def _ints(values):
    return (ctypes.c_int * max(1, len(values)))(*values)


def _report(text):
    """The JSON report with a masked −∞ (null in JSON) as -inf, as the JS API gives it."""
    report = json.loads(text)
    for erratum in report["errata"]:
        for field in ("printed", "exact"):
            if erratum[field] is None:
                erratum[field] = -math.inf
    return report


def check(problem, printed, decimals=None, format="json", max_bytes=None):  # noqa: A002 (the CLI's --format)
    """Checks a worked example's printed numbers against the engine's exact ones.

    Returns the report (README, "Check your own numbers"): a dict
    {"checked", "errata", "groups", "unchecked", "decimalsInferred"} for
    format "json", else its text, Markdown or LaTeX. Each erratum names the
    printed cell, its exact value and its group; each group names the cause
    (a misprint, rounding, or a slip such as "no-scale") with a sentence a
    learner can read. Tables given without decimals are read to the most
    decimals any of their numbers shows, and "decimalsInferred" says so.
    """
    if format not in REPORT_FORMATS:
        raise AttentionError(ATTN_ERR_OPTION, f"format: expected one of {', '.join(REPORT_FORMATS)}, got {format!r}")
    if decimals is not None and not isinstance(decimals, (dict, numbers.Integral)):
        raise AttentionError(ATTN_ERR_INPUT, f"decimals: expected a number or a dict by printed key, "
                                             f"got {_describe(decimals)}")
    tables = list(_tables(printed))
    if isinstance(decimals, dict):
        # A misspelt key there would leave its table's decimals guessed.
        names = set(printed) | {name for key, plain, _ in tables for name in (key, plain)}
        stray = next((name for name in decimals if name not in names), None)
        if stray is not None:
            raise AttentionError(ATTN_ERR_INPUT, f'decimals.{stray}: no printed table is named "{stray}"')
    with _Problem(problem, max_bytes) as made:
        made.run()
        lib = made.lib
        handle = ctypes.c_void_p()
        status = lib.attn_check_create(ctypes.byref(handle), made.handle)
        if status != ATTN_OK:
            raise AttentionError(status, lib.attn_status_text(status).decode())

        def checked(status):
            if status != ATTN_OK:
                raise AttentionError(status, lib.attn_check_error(handle).decode())

        try:
            for key, plain, value in tables:
                if isinstance(value, str):  # a note, unless the key names a result
                    checked(lib.attn_check_set_note(handle, c_text(key, f"printed key {json.dumps(key)}")))
                    continue
                dims, values = _flatten(value, f"printed.{key}", _printed_leaf)
                places = _decimals_of(decimals, key, plain, len(values))
                checked(lib.attn_check_set_printed(
                    handle, c_text(key, f"printed key {json.dumps(key)}"), len(dims), _ints(dims), (ctypes.c_double * len(values))(*values),
                    None if places is None else _ints(places)))
            checked(lib.attn_check_run(handle, None))
            text = formatted(lib.attn_check_format, handle, formats()[format], checked)
        finally:
            lib.attn_check_destroy(handle)
    return _report(text) if format == "json" else text


def answer(problem, result, row, col, typed, max_bytes=None):
    """A learner's typed value for one cell of a result, graded by the check's
    rule (attn_check_answer): right when the exact value rounds to it at the
    decimals typed (at least 2), else the cause the check finds ("no-scale",
    "rounding", "misprint", ...) in the learner's terms, with a hint. A dict:
    right, cause, verdict, hint, rounded, exact, step, decimals, readable."""
    if not isinstance(result, str) or not isinstance(typed, str):
        raise AttentionError(ATTN_ERR_INPUT, f"answer: result and typed must be strings, got "
                                             f"{_describe(result)} and {_describe(typed)}")
    for name, value in (("row", row), ("col", col)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**31:
            raise AttentionError(ATTN_ERR_INPUT, f"answer: {name} must be a whole number from 0, got {_describe(value)}")
    with _Problem(problem, max_bytes) as made:
        made.run()
        lib = made.lib
        handle = ctypes.c_void_p()
        status = lib.attn_check_create(ctypes.byref(handle), made.handle)
        if status != ATTN_OK:
            raise AttentionError(status, lib.attn_status_text(status).decode())

        def checked(status):
            if status != ATTN_OK:
                raise AttentionError(status, lib.attn_check_error(handle).decode())

        name = c_text(result, "answer.result")
        text = c_text(typed, "answer.typed")
        try:
            return json.loads(formatted(
                lambda made_check, _format, buffer, cap, length: lib.attn_check_answer(
                    made_check, name, int(row), int(col), text, buffer, cap, length),
                handle, 0, checked))
        finally:
            lib.attn_check_destroy(handle)
