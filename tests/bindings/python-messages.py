"""tests/bindings/messages.test.mjs's Python side: a JSON list of problems
on standard input, and for each what attention_explainer.run says, as a
JSON list of [status, message] ([0, ""] for a run that succeeds)."""

import json
import sys

import attention_explainer as ae


def outcome(problem):
    try:
        ae.run(problem)
    except ae.AttentionError as error:
        return [error.status, str(error)]
    return [0, ""]


json.dump([outcome(problem) for problem in json.load(sys.stdin)], sys.stdout)
