"""The C library through ctypes: problems in, results out.

A problem is a dict as build/attn and the JS API take it: "kind" and the
fields by the JS API's names. Each value goes to the setter of its type
(attn_problem_set_number, _bool, _string, _strings, _tensor), as the CLI's
JSON adapter (src/cli/problem_json.c) sends JSON members. No number goes
through text:

- An array reaches attn_problem_set_tensor as a buffer: a C-contiguous
  float64 array as it is (no copy here; the problem keeps one copy), any
  other array of real numbers converted once to C-contiguous float64. The
  rule for other dtypes (docs/embedding.md, "Numbers in, numbers out"):
  float16, float32, booleans and integers of magnitude at most 2**53 are
  widened exactly, every such value being a double, so the result is the
  float64 computation of the very numbers given; integers beyond 2**53 and
  long doubles, which float64 would round, are refused with a message.
- Results are numpy arrays over the memory the library filled
  (attn_problem_result_name and attn_problem_result), not copies: the
  problem, its copy of the inputs and its results live as long as any of
  those arrays does.
"""

import ctypes
import ctypes.util
import json
import numbers
import os
from pathlib import Path

import numpy as np

# src/attention.h: attn_status (stable numbers).
ATTN_OK = 0
ATTN_ERR_OPTION = 5
ATTN_ERR_RANGE = 6
ATTN_ERR_INPUT = 10
ATTN_ERR_TOO_LARGE = 12

# Every integer of magnitude up to 2**53 is a double; past it float64 rounds.
EXACT_INTEGERS = 2**53


class AttentionError(Exception):
    """An error from the engine: status is its attn_status code, the message its own line."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def _library_path():
    """The shared library: $ATTENTION_EXPLAINER_LIBRARY, beside the package, or the loader's."""
    named = os.environ.get("ATTENTION_EXPLAINER_LIBRARY")
    if named:
        return named
    beside = Path(__file__).with_name("libattention.so")
    if beside.exists():
        return str(beside)
    found = ctypes.util.find_library("attention")
    if found:
        return found
    raise OSError("attention_explainer: libattention.so is neither beside the package nor where the "
                  "loader looks; build it with `make python-package` before `pip install ./python`, "
                  "or `make install` it, or name it in ATTENTION_EXPLAINER_LIBRARY")


def _load():
    lib = ctypes.CDLL(_library_path())
    p = ctypes.c_void_p
    c_str = ctypes.c_char_p
    signatures = {
        "attn_status_text": (c_str, [ctypes.c_int]),
        "attn_problem_kind": (c_str, [ctypes.c_int]),
        "attn_format_name": (c_str, [ctypes.c_int]),
        "attn_problem_create": (ctypes.c_int, [ctypes.POINTER(p), c_str, p]),
        "attn_problem_destroy": (None, [p]),
        "attn_problem_set_tensor": (ctypes.c_int, [p, c_str, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                                   ctypes.POINTER(ctypes.c_double)]),
        "attn_problem_set_number": (ctypes.c_int, [p, c_str, ctypes.c_double]),
        "attn_problem_set_bool": (ctypes.c_int, [p, c_str, ctypes.c_int]),
        "attn_problem_set_string": (ctypes.c_int, [p, c_str, c_str]),
        "attn_problem_set_strings": (ctypes.c_int, [p, c_str, ctypes.c_int, ctypes.POINTER(c_str)]),
        "attn_problem_run": (ctypes.c_int, [p]),
        "attn_problem_error": (c_str, [p]),
        "attn_problem_set_max_bytes": (ctypes.c_int, [p, ctypes.c_size_t]),
        "attn_problem_result_name": (c_str, [p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
        "attn_problem_result": (ctypes.c_int, [p, c_str, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                               ctypes.POINTER(ctypes.POINTER(ctypes.c_double))]),
        "attn_problem_format": (ctypes.c_int, [p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                               ctypes.POINTER(ctypes.c_size_t)]),
        "attn_problem_set_document": (ctypes.c_int, [p, c_str, ctypes.c_int]),
        "attn_check_create": (ctypes.c_int, [ctypes.POINTER(p), p]),
        "attn_check_destroy": (None, [p]),
        "attn_check_set_printed": (ctypes.c_int, [p, c_str, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                                  ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int)]),
        "attn_check_set_note": (ctypes.c_int, [p, c_str]),
        "attn_check_run": (ctypes.c_int, [p, ctypes.POINTER(ctypes.c_int)]),
        "attn_check_error": (c_str, [p]),
        "attn_check_answer": (ctypes.c_int, [p, c_str, ctypes.c_int, ctypes.c_int, c_str, ctypes.c_char_p,
                                             ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
        "attn_check_format": (ctypes.c_int, [p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.POINTER(ctypes.c_size_t)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


_lib = None


def library():
    """The loaded C library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def kinds():
    """The kinds the library knows, in its order (attn_problem_kind)."""
    names = []
    while (name := library().attn_problem_kind(len(names))) is not None:
        names.append(name.decode())
    return tuple(names)


def formats():
    """The formats a user names, name -> attn_format number (attn_format_name)."""
    numbers = {}
    while (name := library().attn_format_name(len(numbers))) is not None:
        numbers[name.decode()] = len(numbers)
    return numbers


def c_text(text, what):
    """text as the NUL-terminated UTF-8 the engine takes; what names it in the
    error when a NUL (which would end it early in C) or an unpaired surrogate
    (which UTF-8 cannot carry) is in it, with the JS API's words."""
    if not isinstance(text, str):
        raise AttentionError(ATTN_ERR_INPUT, f"{what}: expected text, got {type(text).__name__} {text!r:.40}")
    if "\0" in text:
        raise AttentionError(ATTN_ERR_INPUT, f"{what}: must not contain a NUL character")
    try:
        return text.encode()
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        raise AttentionError(ATTN_ERR_INPUT, f"{what}: must not contain an unpaired surrogate "
                                             f"(U+{code:04X} at index {error.start}), which is not text") from None


def _max_bytes(max_bytes):
    """max_bytes as a size_t, checked here: ctypes would take 2**64 + 5 as 5."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) \
            or not 1 <= max_bytes <= ctypes.c_size_t(-1).value:
        raise AttentionError(ATTN_ERR_RANGE, f"max_bytes: must be a whole number of bytes from 1 to "
                                             f"{ctypes.c_size_t(-1).value}, got {max_bytes!r:.40}")
    return int(max_bytes)


# The C message names the other front ends' option for the limit; Python's
# is max_bytes.
_OTHER_LIMIT_OPTIONS = "maxBytes in the JS API, --max-bytes in build/attn"


class _Problem:
    """One attn_problem, destroyed when the with block ends unless results()
    handed it to the arrays that view its results."""

    def __init__(self, problem, max_bytes=None):
        if not isinstance(problem, dict):
            raise AttentionError(ATTN_ERR_INPUT, f"expected a problem dict, got {type(problem).__name__}")
        kind = problem.get("kind")
        expected = ", ".join(f'"{name}"' for name in kinds())
        if kind is None:
            raise AttentionError(ATTN_ERR_INPUT, f"kind: missing; expected one of {expected}")
        if not isinstance(kind, str):
            raise AttentionError(ATTN_ERR_INPUT, f"kind: expected one of {expected}, got {_json_kind(kind)}")
        self.lib = library()
        self.handle = ctypes.c_void_p()
        status = self.lib.attn_problem_create(ctypes.byref(self.handle), c_text(kind, "kind"), None)
        if status == ATTN_ERR_OPTION:
            raise AttentionError(status, f'kind: unknown kind "{kind}"; expected one of {expected}')
        if status != ATTN_OK:
            raise AttentionError(status, self.lib.attn_status_text(status).decode())
        try:
            if max_bytes is not None:
                self._check(self.lib.attn_problem_set_max_bytes(self.handle, _max_bytes(max_bytes)))
            for field, value in problem.items():
                if not isinstance(field, str):
                    raise AttentionError(ATTN_ERR_INPUT, f"field names must be strings, got {type(field).__name__} "
                                                         f"{field!r:.40}")
                # None leaves a field out, as undefined does in JS.
                if field != "kind" and value is not None:
                    self._set(field, value)
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.handle:
            self.lib.attn_problem_destroy(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def _check(self, status):
        if status != ATTN_OK:
            message = self.lib.attn_problem_error(self.handle).decode()
            if status == ATTN_ERR_TOO_LARGE:
                message = message.replace(_OTHER_LIMIT_OPTIONS, "max_bytes in Python")
            raise AttentionError(status, message)

    def _set(self, field, value):
        name = c_text(field, f"{json.dumps(field)} (a field name)")
        lib = self.lib
        if isinstance(value, (bool, np.bool_)):
            self._check(lib.attn_problem_set_bool(self.handle, name, int(value)))
        elif isinstance(value, (int, float, np.integer, np.floating)):
            self._check(lib.attn_problem_set_number(self.handle, name, float(value)))
        elif isinstance(value, str):
            self._check(lib.attn_problem_set_string(self.handle, name, c_text(value, field)))
        elif isinstance(value, np.ndarray) and value.dtype.kind == "U" and value.ndim == 1:  # labels from numpy
            self._set(field, value.tolist())
        elif isinstance(value, (list, tuple)) and value and all(isinstance(entry, str) for entry in value):
            strings = (ctypes.c_char_p * len(value))(*(c_text(entry, f"{field}[{i}]") for i, entry in enumerate(value)))
            self._check(lib.attn_problem_set_strings(self.handle, name, len(value), strings))
        else:
            self._set_tensor(field, value)

    def _set_tensor(self, field, value):
        try:
            given = np.asarray(value)
        except (TypeError, ValueError):  # rows of different lengths
            raise AttentionError(ATTN_ERR_INPUT, f"{field}: expected a number, a boolean, a string or an array "
                                                 f"of numbers with rows of one length, got {value!r:.60}") from None
        # Real numbers only, as the other front ends take them: numpy would
        # read "2" as 2 and drop an imaginary part without a word.
        if given.dtype.kind in "OUS":  # entries of other kinds, or text among the numbers
            _refuse_non_numbers(field, given if given.dtype.kind == "O" else np.asarray(value, dtype=object))
        elif given.dtype.kind not in "biuf":
            raise AttentionError(ATTN_ERR_INPUT, f"{field}: expected real numbers, got {_kind_name(given)}")
        if given.ndim == 0 or given.ndim > 3:
            raise AttentionError(ATTN_ERR_INPUT, f"{field}: expected an array of 1 to 3 dimensions, got {given.ndim}")
        if given.size == 0:
            raise AttentionError(ATTN_ERR_INPUT, f"{field}: must not be empty")
        _refuse_rounding(field, given)
        # A C-contiguous float64 array is passed as it is; others are
        # converted once.
        array = np.ascontiguousarray(given, dtype=np.float64)
        dims = (ctypes.c_int * 3)(*array.shape, *([0] * (3 - array.ndim)))
        data = array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        name = c_text(field, f"{json.dumps(field)} (a field name)")
        self._check(self.lib.attn_problem_set_tensor(self.handle, name, array.ndim, dims, data))

    def run(self):
        self._check(self.lib.attn_problem_run(self.handle))
        return self

    def results(self):
        """The run's results by name, arrays over the problem's own memory
        (a number for a result of rank 0; per-head results as a list "heads"
        of dicts, where the JSON result has them). The problem is handed to
        those arrays: it is destroyed once the last of them is."""
        owner = _Owner(self.lib, self.handle)
        self.handle = ctypes.c_void_p()
        results, heads = {}, ctypes.c_int()
        index = 0
        while (name := self.lib.attn_problem_result_name(owner.handle, index, ctypes.byref(heads))) is not None:
            name = name.decode()
            if heads.value == 0:
                results[name] = owner.read(name)
            else:
                per_head = results.setdefault("heads", [{} for _ in range(heads.value)])
                for head, entries in enumerate(per_head):
                    entries[name] = owner.read(f"heads.{head}.{name}")
            index += 1
        return results

    def format(self, fmt, title=None, heading_level=0):
        numbers = formats()
        if fmt not in numbers:
            raise AttentionError(ATTN_ERR_OPTION, f"format: expected one of {', '.join(numbers)}, got {fmt!r}")
        # 1 to 4 as the JS API and --heading-level take it; 0 is the
        # default. Checked here: ctypes would take 2**32 + 3 as 3.
        if isinstance(heading_level, bool) or not isinstance(heading_level, (int, np.integer)) \
                or not 0 <= heading_level <= 4:
            raise AttentionError(ATTN_ERR_RANGE, f"heading level: must be 1 to 4, got {heading_level!r:.40}")
        if title is not None or heading_level:
            self._check(self.lib.attn_problem_set_document(
                self.handle, None if title is None else c_text(title, "title"), heading_level))
        return formatted(self.lib.attn_problem_format, self.handle, numbers[fmt], self._check)


class _Owner:
    """A run problem that result arrays view; destroyed with the last of them."""

    def __init__(self, lib, handle):
        self.lib = lib
        self.handle = handle

    def __del__(self):
        self.lib.attn_problem_destroy(self.handle)

    def read(self, name):
        rank, dims, data = ctypes.c_int(), (ctypes.c_int * 3)(), ctypes.POINTER(ctypes.c_double)()
        status = self.lib.attn_problem_result(self.handle, name.encode(), ctypes.byref(rank), dims, ctypes.byref(data))
        if status != ATTN_OK:
            raise AttentionError(status, self.lib.attn_problem_error(self.handle).decode())
        if rank.value == 0:
            return data[0]
        shape = tuple(dims[:rank.value])
        cells = (ctypes.c_double * int(np.prod(shape))).from_address(ctypes.addressof(data.contents))
        cells.owner = self  # the array's base keeps the problem alive
        return np.frombuffer(cells, dtype=np.float64).reshape(shape)


def _refuse_non_numbers(field, array):
    """Refuses an object array's first entry that is not a real number (None,
    text) or that float64 would round (an integer past 2**53), by its index."""
    for index, entry in np.ndenumerate(array):
        where = "".join(f"[{i}]" for i in index)
        if not isinstance(entry, (numbers.Real, np.bool_)):
            raise AttentionError(ATTN_ERR_INPUT, f"{field}{where}: expected a number, got {entry!r:.40}")
        if isinstance(entry, numbers.Integral) and abs(entry) > EXACT_INTEGERS:
            raise AttentionError(ATTN_ERR_INPUT, f"{field}{where}: {entry} is past 2**53, where float64 would round "
                                                 f"it; convert it first")


def _refuse_rounding(field, array):
    """Refuses the values float64 would round: integers past 2**53, long doubles."""
    if array.dtype.kind == "f" and array.dtype.itemsize > 8:
        raise AttentionError(ATTN_ERR_INPUT, f"{field}: expected float64 or narrower, got {array.dtype.name}, "
                                             f"which float64 would round; convert it first")
    if array.dtype.kind in "iu" and array.dtype.itemsize >= 8:
        flat = array.reshape(-1)
        outside = np.flatnonzero((flat > EXACT_INTEGERS) | (flat < -EXACT_INTEGERS))
        if outside.size:
            where = "".join(f"[{i}]" for i in np.unravel_index(outside[0], array.shape))
            raise AttentionError(ATTN_ERR_INPUT, f"{field}{where}: {flat[outside[0]]} is past 2**53, where float64 "
                                                 f"would round it; convert it first")


def _json_kind(value):
    """What a value is, in the words of the C JSON reader's messages (attn_json_describe)."""
    if isinstance(value, (bool, np.bool_)):
        return "a boolean"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "a number"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "an array"
    return "an object"


def _kind_name(array):
    """What an array of other things than real numbers holds, in words."""
    kinds = {"c": "complex numbers", "M": "dates", "m": "time spans"}
    return f"{kinds.get(array.dtype.kind, array.dtype.name)} ({array.flat[0]!r:.20})"


def formatted(format_function, handle, fmt, check):
    """The text an attn_*_format call writes: asked for its length, then written."""
    length = ctypes.c_size_t()
    check(format_function(handle, fmt, None, 0, ctypes.byref(length)))
    buffer = ctypes.create_string_buffer(length.value + 1)
    check(format_function(handle, fmt, buffer, len(buffer), ctypes.byref(length)))
    return buffer.value.decode()


def run(problem, max_bytes=None):
    """Runs a problem dict; its results as float64 numpy arrays the library
    filled (a masked score is -inf). max_bytes: the problem's limit in bytes
    (its inputs' copy, results and scratch space; 256 MiB unless given)."""
    with _Problem(problem, max_bytes) as made:
        return made.run().results()


def format(problem, fmt="markdown", title=None, heading_level=0, max_bytes=None):  # noqa: A001 (the CLI's --format)
    """The problem's result as build/attn --format prints it: json, text, markdown, latex or steps."""
    with _Problem(problem, max_bytes) as made:
        return made.run().format(fmt, title, heading_level)


def steps(problem, max_bytes=None):
    """The walkthrough as data: the engine's list of steps (docs/steps-json.md)."""
    return json.loads(format(problem, "steps", max_bytes=max_bytes))
