"""show(): what a notebook cell receives (the element, its attributes, the
self-contained script), and the errors a wrong argument gets. The notebook
in examples/ is executed and opened in chromium by
tests/python/notebook.test.mjs."""

import base64
import gzip
import html
import json
import re

import numpy as np
import pytest

import attention_explainer as ae


def attributes(shown):
    tag = re.search(r"<attention-walkthrough([^>]*)>", shown._repr_html_()).group(1)
    return {name: html.unescape(value) for name, value in re.findall(r' ([a-z]+)="([^"]*)"', tag)}


def test_a_preset_shows_at_its_step_in_the_compact_layout_with_the_player():
    assert attributes(ae.show("cat-sat-mat", step=7)) == {
        "widget": "walkthrough", "layout": "compact", "theme": "light", "step": "7", "controls": "player",
        "preset": "cat-sat-mat"}


def test_the_cell_carries_the_whole_element_script_packed_and_loads_nothing():
    cell = ae.show("cat-sat-mat")._repr_html_()
    script = re.search(r"<script>(.*)</script></div>$", cell, re.S).group(1)
    packed = re.search(r'atob\("([A-Za-z0-9+/=]+)"\)', script).group(1)
    code = gzip.decompress(base64.b64decode(packed)).decode("utf-8")
    assert 'customElements.define("attention-walkthrough"' in code and len(code) > 500_000
    assert "</script" not in script
    assert not re.search(r'<script[^>]+src=|require\(|https?://cdn', cell)
    bundle = ae.show("cat-sat-mat")._repr_mimebundle_()
    assert bundle["text/html"] == cell and bundle["text/plain"].startswith("<attention_explainer.Walkthrough")


def test_one_cell_adds_under_360_kib_to_the_notebook():
    # Its element code and -Oz engine gzipped: 340 KiB in all (566 KiB
    # unpacked), 351 KiB with the chapter on a real model, whose widget the
    # element's registry holds though this engine leaves the model out.
    assert len(ae.show("cat-sat-mat")._repr_html_().encode("utf-8")) < 360 * 1024


def test_a_problem_dict_with_numpy_arrays_becomes_the_walkthroughs_values():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    shown = ae.show({"kind": "scaledDotProduct", "q": q, "k": q, "v": np.array([[1.0], [2.0]]), "tokens": ["a", "b"]},
                    step=3, layout="full", controls=["player", "editor"])
    found = attributes(shown)
    assert found["controls"] == "player,editor" and found["layout"] == "full" and "preset" not in found
    assert json.loads(found["values"]) == {"mode": "qkv", "fields": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]],
                                                                      "v": [[1], [2]]}, "tokens": ["a", "b"]}
    softmax = json.loads(attributes(ae.show({"kind": "softmax", "x": [3, 1, 2]}))["values"])
    assert softmax == {"mode": "softmax", "fields": {"x": [[3, 1, 2]]}, "vector": True}


def test_wrong_arguments_say_what_is_expected():
    with pytest.raises(ae.AttentionError, match=r"^k: expected a matrix with 2 columns"):
        ae.show({"kind": "scaledDotProduct", "q": [[1, 0]], "k": [[1, 2, 3]], "v": [[1]]})
    with pytest.raises(ae.AttentionError, match='not "multiHead"'):
        ae.show({"kind": "multiHead", "x": [[1.0, 0.0]], "numHeads": 1, "wq": np.eye(2), "wk": np.eye(2),
                 "wv": np.eye(2), "wo": np.eye(2)})
    with pytest.raises(ValueError, match="step counts from 1"):
        ae.show("cat-sat-mat", step=0)
    with pytest.raises(ValueError, match='"compact" or "full"'):
        ae.show("cat-sat-mat", layout="slide")
    with pytest.raises(ValueError, match="widget must be one of"):
        ae.show(widget="planes")
    with pytest.raises(ValueError, match='controls must be "all", "none" or some of player, editor'):
        ae.show("cat-sat-mat", controls="players")
    with pytest.raises(ValueError, match="got \\['player', 'eidtor'\\]"):
        ae.show("cat-sat-mat", controls=["player", "eidtor"])


def test_a_preset_that_does_not_exist_raises_naming_the_nearest():
    with pytest.raises(ValueError, match=r"^show: no preset is named 'no-such-preset'; the presets are three-tokens, "
                                         r"cat-sat-mat, "):
        ae.show("no-such-preset")
    with pytest.raises(ValueError, match=r"no preset is named 'cat-sat-matt'; did you mean 'cat-sat-mat' or "):
        ae.show("cat-sat-matt")


def test_a_section_shows_by_its_widget_name():
    assert attributes(ae.show(widget="masks", controls="all")) == {
        "widget": "masks", "layout": "compact", "theme": "light", "step": "1"}
