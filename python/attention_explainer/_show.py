"""show(): the live walkthrough (or a section) in a notebook cell.

The cell's HTML is the custom element <attention-walkthrough> followed by
the element's self-contained build (web/dist/attention-notebook.js, staged
beside this file by `make python-package`): one classic script with the
engine, styles and presets inside, so it needs no server, no CDN and no
requirejs, and works wherever a notebook runs a cell's scripts (classic
Notebook, JupyterLab, VS Code, Colab) and in the HTML nbconvert exports.
Every cell carries the script; the first to run defines the element and
the others find it defined, so any number of walkthroughs share one page.
"""

import difflib
import html
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from ._engine import ATTN_ERR_INPUT, AttentionError, run

WIDGETS = ("walkthrough", "plane", "masks", "scaling", "multihead", "cross-attention", "alignment",
           "efficient", "online", "block", "trainer")
LAYOUTS = ("compact", "full")
THEMES = ("light", "dark", "auto")
CONTROLS = ("player", "editor", "preset", "errata", "export")
SDPA_FIELDS = ("q", "k", "v", "scores", "dk", "mask", "scale", "keyLength", "window", "stride")


@lru_cache(maxsize=1)
def _script():
    path = Path(__file__).with_name("attention-notebook.js")
    if not path.exists():
        raise FileNotFoundError("attention_explainer: attention-notebook.js is not beside the package; "
                                "build it with `make python-package` before `pip install ./python`")
    return path.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _preset_ids():
    """The presets' ids, from the page's web/presets.json (staged beside this file too)."""
    path = Path(__file__).with_name("presets.json")
    if not path.exists():
        raise FileNotFoundError("attention_explainer: presets.json is not beside the package; "
                                "build it with `make python-package` before `pip install ./python`")
    return tuple(preset["id"] for preset in json.loads(path.read_text(encoding="utf-8"))["presets"])


def _preset(name):
    """name, a preset's id; a ValueError naming the nearest ones otherwise (the cell would only show a notice)."""
    ids = _preset_ids()
    if name not in ids:
        near = difflib.get_close_matches(name, ids, n=3)
        hint = f"did you mean {' or '.join(repr(id) for id in near)}? " if near else ""
        raise ValueError(f"show: no preset is named {name!r}; {hint}the presets are {', '.join(ids)}")
    return name


def _plain(value):
    """numpy arrays (and their numbers) as JSON's lists and numbers."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {key: _plain(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(entry) for entry in value]
    return value


def _values(problem):
    """A problem dict as the walkthrough's edited values, after the engine has accepted it."""
    problem = _plain(problem)
    run(problem)  # the engine's own message for a problem it refuses, here rather than in the cell
    kind = problem["kind"]
    tokens = problem.get("queryTokens", problem.get("tokens"))
    values = {}
    if kind == "scaledDotProduct":
        values["mode"] = "scores" if "scores" in problem else "qkv"
        values["fields"] = {name: problem[name] for name in SDPA_FIELDS if name in problem}
        if "keyTokens" in problem:
            values["keyTokens"] = problem["keyTokens"]
    elif kind == "softmax":
        x = problem["x"]
        vector = not isinstance(x[0], list)
        values["mode"] = "softmax"
        values["fields"] = {name: problem[name] for name in ("scale", "mask") if name in problem}
        values["fields"]["x"] = [x] if vector else x
        if vector:
            values["vector"] = True
            if isinstance(values["fields"].get("mask"), list) and not isinstance(values["fields"]["mask"][0], list):
                values["fields"]["mask"] = [values["fields"]["mask"]]
    elif kind == "weightedSum":
        values["mode"] = "weightedSum"
        values["fields"] = {"weights": problem["weights"], "v": problem["v"]}
    else:
        raise AttentionError(ATTN_ERR_INPUT, f'show: the walkthrough steps through "scaledDotProduct", "softmax" '
                                             f'and "weightedSum" problems, not "{kind}"; its section shows it: '
                                             f'show(widget="multihead"), "alignment", "efficient", "block" or "online"')
    if tokens is not None:
        values["tokens"] = tokens
    return values


class Walkthrough:
    """A widget a notebook shows live: its HTML is the element and the script that runs it."""

    def __init__(self, attributes):
        self.attributes = attributes

    def _repr_html_(self):
        attributes = "".join(f' {name}="{html.escape(text, quote=True)}"' for name, text in self.attributes.items())
        return (f'<div class="attention-explainer-output"><attention-walkthrough{attributes}></attention-walkthrough>'
                f"<script>{_script()}</script></div>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        shown = ", ".join(f"{name}={text!r}" for name, text in self.attributes.items() if name != "values")
        return f"<attention_explainer.Walkthrough {shown}>"


def show(problem_or_preset=None, step=1, layout="compact", controls="player", widget="walkthrough", theme="light"):
    """The live walkthrough in a notebook cell.

    problem_or_preset: a preset id ("cat-sat-mat"), a problem dict (a
    scaledDotProduct, softmax or weightedSum problem, numpy arrays welcome),
    or None for the default example. step counts from 1. layout "compact"
    (one height, fits a slide) or "full"; controls "player", "all", "none"
    or a list ("player", "editor", "preset", "errata", "export"); widget
    names a section instead ("plane", "masks", ...); theme "light", "dark"
    or "auto".
    """
    if widget not in WIDGETS:
        raise ValueError(f"show: widget must be one of {', '.join(WIDGETS)}, got {widget!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"show: layout must be \"compact\" or \"full\", got {layout!r}")
    if theme not in THEMES:
        raise ValueError(f"show: theme must be one of {', '.join(THEMES)}, got {theme!r}")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 1:
        raise ValueError(f"show: step counts from 1, got {step!r}")
    listed = isinstance(controls, (list, tuple))
    allowed = CONTROLS if listed else ("all", "none", *CONTROLS)
    if any(name not in allowed for name in (controls if listed else [controls])):
        raise ValueError(f"show: controls must be \"all\", \"none\" or some of {', '.join(CONTROLS)}, got {controls!r}")
    attributes = {"widget": widget, "layout": layout, "theme": theme, "step": str(int(step))}
    if listed:
        attributes["controls"] = ",".join(controls) if controls else "none"
    elif controls != "all":
        attributes["controls"] = controls
    if isinstance(problem_or_preset, str):
        attributes["preset"] = _preset(problem_or_preset)
    elif isinstance(problem_or_preset, dict):
        attributes["values"] = json.dumps(_values(problem_or_preset), separators=(",", ":"))
    elif problem_or_preset is not None:
        raise ValueError(f"show: expected a preset id or a problem dict, got {type(problem_or_preset).__name__}")
    return Walkthrough(attributes)
