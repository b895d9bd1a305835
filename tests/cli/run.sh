#!/usr/bin/env bash
# Tests for the command line (build/attn): the "cat sat mat" example of
# tutorial 001 in every format (JSON, text, Markdown, LaTeX, steps), byte for
# byte against tests/cli/golden/, and bad input, each with exit status 2 and
# one exact line on stderr.
#
#   tests/cli/run.sh            run the tests (from anywhere)
#   tests/cli/run.sh --update   rewrite the golden files first; review the
#                               diff before committing it
# ATTN=path overrides the binary under test.
set -u
cd "$(dirname "$0")/../.." || exit 2

attn=${ATTN:-build/attn}
input=tests/cli/cat-sat-mat.json
golden=tests/cli/golden
update=0
case "${1:-}" in
    --update) update=1 ;;
    "") ;;
    *) echo "usage: tests/cli/run.sh [--update]" >&2; exit 2 ;;
esac
if [ ! -x "$attn" ]; then
    echo "tests/cli/run.sh: $attn is missing; run make build/attn first" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    shift
    for line in "$@"; do echo "  $line"; done
}

# expect_output NAME GOLDEN [ARGS...]: exit 0, nothing on stderr, stdout
# equal to the golden file. Standard input is the example.
expect_output() {
    local name=$1 want=$2
    shift 2
    local status=0
    "$attn" "$@" <"$input" >"$work/out" 2>"$work/err" || status=$?
    if [ "$status" -ne 0 ] || [ -s "$work/err" ]; then
        fail "$name" "exit status $status, stderr: $(head -c 300 "$work/err")"
    elif cmp -s "$work/out" "$want"; then
        pass
    else
        fail "$name" "stdout differs from $want:" \
            "$(diff -u "$want" "$work/out" | head -n 20)"
    fi
}

# expect_error NAME MESSAGE INPUT [ARGS...]: exit 2, nothing on stdout,
# exactly MESSAGE (one line) on stderr. INPUT is fed on standard input.
expect_error() {
    local name=$1 want=$2 stdin=$3
    shift 3
    local status=0
    printf '%s' "$stdin" | "$attn" "$@" >"$work/out" 2>"$work/err" || status=$?
    local got
    got=$(cat "$work/err"; echo x)
    got=${got%x}
    if [ "$status" -ne 2 ]; then
        fail "$name" "exit status $status, expected 2" "stderr: $got"
    elif [ -s "$work/out" ]; then
        fail "$name" "stdout should be empty: $(head -c 200 "$work/out")"
    elif [ "$got" != "$want"$'\n' ]; then
        fail "$name" "stderr: $got" "wanted: $want"
    else
        pass
    fi
}

# ---- Golden output for each format ----

for format in json text markdown latex steps; do
    case $format in
        json) ext=json ;; text) ext=txt ;; markdown) ext=md ;; latex) ext=tex ;;
        steps) ext=steps.json ;;
    esac
    want=$golden/cat-sat-mat.$ext
    if [ "$update" -eq 1 ]; then
        "$attn" --format "$format" "$input" >"$want" || exit 1
        echo "updated $want"
    fi
    expect_output "--format $format FILE matches $want" "$want" \
        --format "$format" "$input"
    expect_output "-f $format on standard input matches $want" "$want" \
        -f "$format"
    expect_output "--format=$format - matches $want" "$want" \
        "--format=$format" -
done
expect_output "JSON is the default format" "$golden/cat-sat-mat.json" \
    "$input"

# ---- The steps in two parts, as the page asks for them ----

# The outline and each step's equations, against the whole steps golden
# split here: the outline is every step without "equations" (a step with
# some says how many), and --step N is step N's "equations" ([] for none).
split=$(node -e '
const whole = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const equations = whole.steps.map((step) => step.equations ?? []);
for (const step of whole.steps) {
  if (step.equations?.length) step.equationCount = step.equations.length;
  delete step.equations;
}
process.stdout.write(JSON.stringify({ outline: whole, equations }));' "$golden/cat-sat-mat.steps.json")
outline_ok=$(printf '%s' "$split" | node -e '
const { outline } = JSON.parse(require("fs").readFileSync(0, "utf8"));
const got = JSON.parse(require("child_process").execFileSync(process.argv[1], ["--format", "steps", "--outline", process.argv[2]]));
process.stdout.write(String(JSON.stringify(got) === JSON.stringify(outline)));' "$attn" "$input")
if [ "$outline_ok" = true ]; then pass; else fail "--format steps --outline is the steps without their equations"; fi
steps_ok=$(printf '%s' "$split" | node -e '
const { equations } = JSON.parse(require("fs").readFileSync(0, "utf8"));
const run = (n) => JSON.parse(require("child_process").execFileSync(process.argv[1],
  ["--format", "steps", "--step", String(n), process.argv[2]]));
process.stdout.write(String(equations.length >= 9
  && equations.every((list, i) => JSON.stringify(run(i + 1)) === JSON.stringify(list))));' "$attn" "$input")
if [ "$steps_ok" = true ]; then pass; else fail "--format steps --step N writes step N's equations, for every step"; fi
expect_error "--step past the last step names the steps there are" \
    'attn: step: expected a step from 1 to 5, got 6' \
    '{"kind": "softmax", "x": [1, 2, 3]}' --format steps --step 6
expect_error "--step 0 is refused: steps count from 1" \
    'attn: --step: expected a step number from 1, got "0"' \
    '{"kind": "softmax", "x": [1, 2, 3]}' --format steps --step 0
expect_error "--step without --format steps says what it needs" \
    'attn: --step needs --format steps (not attn check)' \
    '{"kind": "softmax", "x": [1, 2, 3]}' --step 1
expect_error "--outline with --step asks for one or the other" \
    'attn: --outline and --step: one or the other' \
    '{"kind": "softmax", "x": [1, 2, 3]}' --format steps --outline --step 1

# One key: every weight is 1, so gradQ, gradK and gradScaled are 0, gradV
# is the column sums of gradOutput and gradWeights its rows times v.
if [ "$update" -eq 1 ]; then
    "$attn" tests/cli/gradients.json >"$golden/gradients.json" || exit 1
    echo "updated $golden/gradients.json"
fi
expect_output "gradOutput adds the gradients (one key, by hand)" \
    "$golden/gradients.json" tests/cli/gradients.json

# ---- Help and version ----

status=0
"$attn" --help >"$work/out" 2>"$work/err" || status=$?
if [ "$status" -eq 0 ] && [ ! -s "$work/err" ] &&
    [ "$(head -n 1 "$work/out")" = \
      "usage: attn [--format json|text|markdown|latex|steps] [-o FILE] [--max-bytes N] [--title TEXT] [--heading-level N] [FILE]" ]; then
    pass
else
    fail "--help prints the usage on stdout and exits 0" "status $status"
fi
status=0
version=$("$attn" --version 2>&1) || status=$?
if [ "$status" -eq 0 ] && [[ $version =~ ^attn\ [0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    pass
else
    fail "--version prints attn X.Y.Z and exits 0" "got: $version"
fi

# ---- Bad input: exit status 2 and one line on stderr ----

sdpa_ok='"k": [[1, 0], [0, 1], [1, 1]], "v": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]'
kinds='"scaledDotProduct", "weightedSum", "multiHead", "additive", "luong", "linear", "softmax", "transformerBlock", "onlineSoftmax"'
usage='usage: attn [--format json|text|markdown|latex|steps] [-o FILE] [--max-bytes N] [--title TEXT] [--heading-level N] [FILE]'

expect_error "invalid JSON names its line and column" \
    'attn: invalid JSON at line 2, column 18, near " [1, 2, 3],, ]}"' \
    $'{"kind": "softmax",\n "x": [1, 2, 3],, ]}'
expect_error "a comma after an object's last member is named where it is, not at the end of the input" \
    'attn: invalid JSON at line 2, column 13: a comma after the last entry, which JSON does not allow' \
    $'{"kind": "softmax",\n "x": [1, 2],\n}\n'
expect_error "a comma after an array's last entry is named where it is" \
    'attn: invalid JSON at line 1, column 31: a comma after the last entry, which JSON does not allow' \
    '{"kind": "softmax", "x": [1, 2,], "note": "a,]"}'
expect_error "truncated JSON fails at the end of the input" \
    'attn: invalid JSON at the end of the input (line 1, column 35), after "": [1, 2, 3]"' \
    '{"kind": "softmax", "x": [1, 2, 3]'
expect_error "empty input asks for a problem object" \
    'attn: empty input; expected a JSON problem object such as {"kind": "softmax", "x": [1, 2, 3]}' \
    $'  \n'
expect_error "a JSON array is not a problem" \
    'attn: expected a problem object, got an array' '[1, 2, 3]'
expect_error "missing q is named with the shape it needs" \
    'attn: q: missing (a matrix n_q x d_k)' \
    "{\"kind\": \"scaledDotProduct\", $sdpa_ok}"
expect_error "ragged q names both row lengths" \
    'attn: q: rows must all have the same length (row 0 has 2 entries, row 1 has 3)' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [0, 1, 2], [1, 1]], $sdpa_ok}"
expect_error "a string inside q is named by its path" \
    'attn: q[1][0]: expected a number, got a string' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [\"0\", 1], [1, 1]], $sdpa_ok}"
expect_error "q nested four deep is refused" \
    'attn: q: expected at most 3 levels of nesting' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[[[1]]]], $sdpa_ok}"
expect_error "k with the wrong number of columns names d_k" \
    'attn: k: expected a matrix with 2 columns (d_k, the columns of q), got 3x3' \
    '{"kind": "scaledDotProduct", "q": [[1, 0], [0, 1], [1, 1]], "k": [[1, 2, 3], [4, 5, 6], [7, 8, 9]], "v": [[1], [2], [3]]}'
expect_error "a misshapen gradOutput names the shape it needs" \
    'attn: gradOutput: expected a matrix with 3 rows (n_q, the rows of q) and 3 columns (d_v, the columns of v), got 3x2' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [0, 1], [1, 1]], $sdpa_ok, \"gradOutput\": [[1, 0], [0, 1], [1, 1]]}"
expect_error "an unknown kind lists the kinds" \
    "attn: kind: unknown kind \"attentionPlease\"; expected one of $kinds" \
    '{"kind": "attentionPlease", "x": [1, 2]}'
expect_error "a missing kind lists the kinds" \
    "attn: kind: missing; expected one of $kinds" '{"x": [1, 2]}'
expect_error "an unknown field lists the kind's fields" \
    'attn: y: unknown field for kind "softmax" (fields: x, scale, mask, queryTokens, keyTokens)' \
    '{"kind": "softmax", "x": [1, 2], "y": 3}'
expect_error "an unknown format names the five formats" \
    'attn: unknown format "yaml" (expected json, text, markdown, latex or steps)' \
    '{"kind": "softmax", "x": [1, 2]}' --format yaml
expect_error "an unknown option prints the usage" \
    "attn: unknown option \"--verbose\"; $usage" \
    '{"kind": "softmax", "x": [1, 2]}' --verbose
expect_error "--format without a value prints the usage" \
    "attn: --format needs a value (json, text, markdown, latex or steps); $usage" \
    '{"kind": "softmax", "x": [1, 2]}' --format
expect_error "two files print the usage" \
    "attn: expected one FILE, got \"$input\" and \"$input\"; $usage" \
    '' "$input" "$input"
expect_error "a missing file is named with the reason" \
    'attn: cannot open tests/cli/no-such-problem.json: No such file or directory' \
    '' tests/cli/no-such-problem.json
expect_error "a directory cannot be read" \
    'attn: cannot read tests/cli: Is a directory' '' tests/cli

# ---- A walkthrough in a document: --title and --heading-level ----

# The first lines of the Markdown walkthrough, by the options given.
head_of() { "$attn" --format markdown "$@" "$input" | head -n 5; }
want=$'## Tutorial 001, worked example\n\nAttention(Q, K, V) = softmax(Q Kᵀ × scale) V for queries n\\_q = 3, keys n\\_k = 3, d\\_k = 4 and d\\_v = 4.\n\n### Step 1. Queries, keys and values'
got=$(head_of --title "Tutorial 001, worked example" --heading-level 2)
if [ "$got" = "$want" ]; then pass; else fail "--title and --heading-level set the title and push the steps down" "got: $got"; fi
got=$("$attn" --format latex --heading-level=4 --title='Q & A' "$input" | head -n 1)
if [ "$got" = '\subparagraph{Q \& A}' ]; then pass; else fail "--heading-level=4 gives LaTeX subparagraphs, the title escaped" "got: $got"; fi
got=$("$attn" --format latex --title='x_1, y_2 and 50%' "$input" | head -n 1)
if [ "$got" = '\subsection*{x\_1, y\_2 and 50\%}' ]; then pass; else fail "a LaTeX title is the user's text, x_1 not made a subscript" "got: $got"; fi
expect_error "--heading-level 5 is refused" \
    'attn: --heading-level: expected 1, 2, 3 or 4, got "5"' \
    '{"kind": "softmax", "x": [1, 2]}' --heading-level 5
expect_error "a title with a control character is refused" \
    'attn: title: must not hold control characters (byte 4 is 0x1b)' \
    '{"kind": "softmax", "x": [1, 2]}' --title $'abc\e[31m'
expect_error "--title without a value prints the usage" \
    "attn: --title needs a value; $usage" \
    '{"kind": "softmax", "x": [1, 2]}' --title

# ---- Strict input ----

expect_error "a NUL escape in the kind is refused, not cut to softmax" \
    'attn: invalid input at line 1, column 18: \u0000 (a NUL character) in a string; names and values must not contain one' \
    '{"kind": "softmax\u0000junk", "x": [1, 2]}'
expect_error "a NUL escape in a field name is refused" \
    'attn: invalid input at line 1, column 23: \u0000 (a NUL character) in a string; names and values must not contain one' \
    '{"kind": "softmax", "x\u0000y": [1, 2]}'
expect_error "an escaped backslash before u0000 is text, not a NUL" \
    'attn: y\u0000: unknown field for kind "softmax" (fields: x, scale, mask, queryTokens, keyTokens)' \
    '{"kind": "softmax", "x": [1, 2], "y\\u0000": 1}'
expect_error "a key given twice is named" \
    'attn: x: the key appears more than once in the problem' \
    '{"kind": "softmax", "x": [1, 2], "x": [3, 4]}'
expect_error "a key given twice in a nested object is named with its path" \
    'attn: x.a: the key appears more than once in that object' \
    '{"kind": "softmax", "x": {"a": 1, "a": 2}}'
expect_error "a string first in a tensor is reported at its index as a string" \
    'attn: x[0]: expected a number, got a string' \
    '{"kind": "softmax", "x": ["1", 2]}'
expect_error "a number among labels is reported at its index as a number" \
    'attn: tokens[1]: expected a string, got a number' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [0, 1], [1, 1]], $sdpa_ok, \"tokens\": [\"a\", 2, \"c\"]}"
expect_error "labels that are not UTF-8 are refused, naming the label and the byte" \
    'attn: tokens[1]: must be valid UTF-8 (byte 1 is 0xff)' \
    "{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [0, 1], [1, 1]], $sdpa_ok, \"tokens\": [\"a\", \"$(printf '\377\376')\", \"c\"]}" \
    --format steps
expect_error "a title that is not UTF-8 is refused" \
    'attn: title: must be valid UTF-8 (byte 3 is 0xe2)' \
    '{"kind": "softmax", "x": [1, 2]}' --title "ok$(printf '\342\202')" --format markdown
deep=$(printf '%0.s[' $(seq 70))$(printf '%0.s]' $(seq 70))
expect_error "deep nesting says how deep, not where cJSON gave up" \
    'attn: invalid input at line 1, column 65: nested deeper than 64 levels (a problem needs at most 4)' \
    "$deep"

# ---- Sizes ----

# 64 queries, keys and values of one number each: 986 bytes of JSON, a
# parse tree of under 50,000 bytes, and weights of 64 x 64 that are not.
rows="[$(seq -s, 64 | sed 's/[0-9][0-9]*/[&]/g')]"
expect_error "a problem above --max-bytes fails before its results are allocated" \
    'attn: scaledDotProduct: its results and scratch space would make the problem hold 67072 bytes, more than its limit of 50000 bytes; use smaller inputs or raise the limit (maxBytes in the JS API, --max-bytes in build/attn)' \
    "{\"kind\": \"scaledDotProduct\", \"q\": $rows, \"k\": $rows, \"v\": $rows}" --max-bytes 50000
# 2 x 32 bytes of text, 2 x 2 containers + 4 commas + 1 = 9 nodes of 80
# bytes, and 3 strings ("kind", "softmax", "x": 12 bytes) of 1 + 32 more
# each: 64 + 720 + 12 + 99 = 895.
expect_error "JSON whose parse would pass --max-bytes is refused before it is parsed" \
    "attn: the input's JSON (32 bytes) would take about 895 bytes to read and parse, more than the limit of 100 bytes; use a smaller input or raise the limit (--max-bytes)" \
    '{"kind":"softmax","x":[1,2,3,4]}' --max-bytes 100
expect_error "input longer than --max-bytes is refused unread" \
    'attn: standard input holds more than 10 bytes of JSON, the limit (--max-bytes)' \
    '{"kind": "softmax", "x": [1, 2, 3, 4, 5, 6, 7, 8]}' --max-bytes 10
expect_error "--max-bytes must be a whole number" \
    'attn: --max-bytes: expected a whole number of bytes from 1 to 18446744073709551615, got "1e6"' \
    '{"kind": "softmax", "x": [1, 2]}' --max-bytes 1e6

# ---- -o FILE ----

rm -f "$work/result.json"
expect_error "-o leaves no file behind when the problem fails" \
    'attn: x[1]: expected a number, got a string' \
    '{"kind": "softmax", "x": [1, "a"]}' -o "$work/result.json"
if compgen -G "$work/result.json*" >/dev/null; then
    fail "-o on failure creates nothing" "found $(ls "$work")"
else
    pass
fi
echo previous >"$work/kept.json"
printf '%s' '{"kind": "softmax"' | "$attn" -o "$work/kept.json" 2>/dev/null
if [ "$(cat "$work/kept.json")" = previous ]; then pass
else fail "-o on failure keeps an existing file as it was" "got $(head -c 100 "$work/kept.json")"; fi
status=0
"$attn" --format markdown -o "$work/result.md" "$input" >"$work/out" 2>"$work/err" || status=$?
if [ "$status" -eq 0 ] && [ ! -s "$work/out" ] && [ ! -s "$work/err" ] &&
    cmp -s "$work/result.md" "$golden/cat-sat-mat.md"; then
    pass
else
    fail "-o FILE writes the result to FILE and nothing to stdout" "status $status"
fi
expect_error "-o into a missing directory names the file" \
    "attn: cannot write $work/no/such/dir.json: No such file or directory" \
    '{"kind": "softmax", "x": [1, 2]}' --output="$work/no/such/dir.json"

# ---- attn check ----

check_input=tests/cli/check-cat-sat-mat.json
# expect_check NAME GOLDEN STATUS [ARGS...]: exit STATUS, nothing on
# stderr, stdout equal to the golden file; the check's example as FILE.
expect_check() {
    local name=$1 want=$2 want_status=$3
    shift 3
    local status=0
    "$attn" check "$@" >"$work/out" 2>"$work/err" || status=$?
    if [ "$status" -ne "$want_status" ] || [ -s "$work/err" ]; then
        fail "$name" "exit status $status (expected $want_status), stderr: $(head -c 300 "$work/err")"
    elif [ "$update" -eq 1 ]; then
        cp "$work/out" "$want"
        pass
    elif cmp -s "$work/out" "$want"; then
        pass
    else
        fail "$name" "stdout differs from $want:" \
            "$(diff -u "$want" "$work/out" | head -n 20)"
    fi
}
for pair in json:json text:txt markdown:md latex:tex; do
    expect_check "attn check --format ${pair%%:*} reports the tutorial's errata, exit 1" \
        "$golden/check-cat-sat-mat.${pair#*:}" 1 --format "${pair%%:*}" "$check_input"
done
expect_check "attn check names the slip of docs/check.md's example: the scores not divided by √d_k" \
    "$golden/check-no-scale.txt" 1 --format text tests/cli/check-no-scale.json
printf '%s' '{"kind": "softmax", "x": [1, 2, 3], "printed": {"weights": [0.09, 0.245, 0.665]}}' >"$work/holds.json"
expect_check "attn check on standard input: every printed number holds, exit 0" \
    "$golden/check-holds.txt" 0 --format text - <"$work/holds.json"
printf '%s' '{"kind": "softmax", "x": [1, 2, 3], "printed": {"note": "[0.5]", "weights": [0.100, 0.245, 0.665]}}' >"$work/zeros.json"
status=0
"$attn" check "$work/zeros.json" >"$work/out" 2>"$work/err" || status=$?
if [ "$status" -eq 1 ] && grep -q '"field":"weights","index":\[0\],"printed":0.1,"exact":0.09[0-9]*,"decimals":3' "$work/out"; then
    pass
else
    fail "attn check reads the decimals as the file writes them (0.100 has 3)" "status $status: $(head -c 300 "$work/out")"
fi
expect_error "attn on a check file points to attn check" \
    'attn: printed: this is a check file; run attn check on it (attn alone computes a problem without "printed")' \
    "$(cat "$check_input")" --format markdown
expect_error "attn check without printed numbers says what is missing" \
    'attn: printed: missing (the numbers to check, by result name, beside the problem'"'"'s fields)' \
    '{"kind": "softmax", "x": [1, 2]}' check
expect_error "attn check names a printed table of the wrong shape" \
    'attn: printed.weights: expected 3 (as weights), got 2' \
    '{"kind": "softmax", "x": [1, 2, 3], "printed": {"weights": [0.5, 0.5]}}' check
expect_error "attn check names a printed string where a number belongs" \
    'attn: printed.weights[1]: expected a number, got a string' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"weights": [0.5, "a"]}}' check
expect_error "attn check refuses a printed key one letter from a result's name, naming the result" \
    'attn: printed.weight: this problem has no result named "weight"; did you mean "weights"?' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"weight": [0.27, 0.73]}}' check
expect_error "attn check refuses a result's name in the wrong case" \
    'attn: printed.Weights: this problem has no result named "Weights"; did you mean "weights"?' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"Weights": [0.27, 0.73]}}' check
expect_error "attn check refuses a result's table written as text, which it would not have checked" \
    'attn: printed.weights: expected the numbers of weights (a number or a table of them), got text' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"weights": "0.27 0.73", "notes": "a note stays a note"}}' check
expect_error "attn check refuses decimals given for a table that is not printed" \
    'attn: printedDecimals.weigths: no printed table is named "weigths"' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"weights": [0.27, 0.73]}, "printedDecimals": {"weigths": 2}}' check
expect_error "attn check with nothing it can check fails rather than passing" \
    'attn: printed: nothing to check: no key of it names a result of this problem (such as scores, scaled, weights or output)' \
    '{"kind": "softmax", "x": [1, 2], "printed": {"sqrt_dk": 1.41}}' check
if [ "$(printf '%s' '{"kind": "softmax", "x": [1, 2], "printed": {"sqrt_dk": 1.41, "notes": "n"}}' \
        | "$attn" check --allow-none 2>&1)" = '{"checked":0,"errata":[],"groups":[],"unchecked":["sqrt_dk"],"decimalsInferred":{}}' ]; then
    pass
else
    fail "attn check --allow-none reports nothing checked, naming the keys it did not check"
fi
expect_error "--allow-none belongs to attn check" \
    'attn: --allow-none is an option of attn check' \
    '{"kind": "softmax", "x": [1, 2]}' --allow-none
expect_error "attn check has no steps format" \
    'attn: attn check: --format is json, text, markdown or latex' \
    '{"kind": "softmax", "x": [1, 2], "printed": {}}' check --format steps

# ---- attn model: a tiny checkpoint written by tests/cli/tiny-model.mjs ----
# (its numbers against a float64 Llama: tests/cli/model.test.mjs)

model=$work/tiny-model
node tests/cli/tiny-model.mjs "$model" || exit 2
for case in "run-text:txt:run --format text --text cat" \
    "run-markdown:md:run --format markdown --text a|b" \
    "generate-text:txt:generate --format text --text héllo --tokens 6" \
    "generate-sampled:md:generate --format markdown --ids 72,105 --tokens 6 --temperature 0.8 --seed 5" \
    "head-markdown:md:run --format markdown --text a|b --layer 1 --head 3"; do
    name=${case%%:*}
    rest=${case#*:}
    want=$golden/model-$name.${rest%%:*}
    # shellcheck disable=SC2086 # the case's arguments, split on spaces
    set -- ${rest#*:}
    if [ "$update" -eq 1 ]; then
        "$attn" model "$1" --model "$model" "${@:2}" >"$want" || exit 1
        echo "updated $want"
    fi
    expect_output "attn model $* matches $want" "$want" model "$1" --model "$model" "${@:2}"
done
expect_output "attn model generate --no-cache prints the ids the cache gives" \
    "$golden/model-generate-text.txt" model generate --no-cache --format text --model "$model" --text héllo --tokens 6
expect_error "attn model names a missing model folder" \
    "attn model: cannot read $work/none/config.json: No such file or directory" '' \
    model run --model "$work/none" --text hi
expect_error "attn model says a model folder is needed" \
    'attn model: --model DIR is missing: a folder holding config.json and model.safetensors' '' \
    model run --text hi
expect_error "attn model names an id outside the vocabulary" \
    'attn model: token 300 (at 1) is not an id of this model, whose ids are 0 to vocab_size - 1 = 258' '' \
    model run --model "$model" --ids 1,300
expect_error "attn model names ids it cannot read" \
    'attn model: --ids: expected token ids (whole numbers) separated by commas, such as 3,14,15; got "1,,2"' '' \
    model run --model "$model" --ids 1,,2
expect_error "attn model refuses more tokens than max_position_embeddings" \
    'attn model: the model reads at most max_position_embeddings = 32 tokens, got 33' '' \
    model run --model "$model" --text "$(printf 'a%.0s' $(seq 33))"
expect_error "attn model generate refuses a prompt and tokens past max_position_embeddings" \
    "attn model: the model reads at most max_position_embeddings = 32 tokens; the prompt's 5 and 28 generated would be more" '' \
    model generate --model "$model" --text hello --tokens 28
expect_error "attn model generate needs --tokens" \
    'attn model: generate needs --tokens N: how many tokens to generate' '' \
    model generate --model "$model" --text hi
expect_error "attn model takes the text or its ids, not both" \
    'attn model: give the text as --text TEXT or its ids as --ids 3,14,15 (one of them)' '' \
    model run --model "$model" --text hi --ids 1
expect_error "attn model refuses an empty text" \
    'attn model: the model needs at least one token, got 0' '' \
    model run --model "$model" --text ''
expect_error "attn model refuses a negative temperature" \
    'attn model: --temperature: expected a number from 0 (0: the most likely token each time), got "-1"' '' \
    model generate --model "$model" --text hi --tokens 2 --temperature -1
expect_error "attn model run takes no generation options" \
    'attn model: --tokens, --temperature, --seed and --no-cache are options of attn model generate' '' \
    model run --model "$model" --text hi --tokens 2
expect_error "attn model names the formats" \
    'attn model: --format: expected json, text, markdown, latex or steps, got "html"' '' \
    model run --model "$model" --text hi --format html
expect_error "attn model refuses a model above --max-bytes before reading it" \
    'attn model: the model needs 65205 bytes for model.safetensors read whole and its weights as doubles, more than its limit of 1000 bytes; raise the limit (--max-bytes in attn model)' '' \
    model run --model "$model" --text hi --max-bytes 1000
expect_error "attn model run counts the weights and logits it prints within --max-bytes" \
    'attn model: the attention weights and logits of 32 tokens take 131840 bytes, more than --max-bytes 100000' '' \
    model run --model "$model" --text "$(printf 'a%.0s' $(seq 32))" --max-bytes 100000
expect_error "attn model names a layer the model does not have" \
    'attn model: layer 2 is not a layer of this model, whose layers are 0 to 1' '' \
    model run --model "$model" --text cat --layer 2 --head 0
expect_error "attn model names a head the model does not have" \
    'attn model: head 4 is not a head of this model, whose heads are 0 to 3' '' \
    model run --model "$model" --text cat --layer 0 --head 4
expect_error "attn model takes --layer and --head together" \
    'attn model: --layer L and --head H go together, with attn model run: the walkthrough of one head' '' \
    model run --model "$model" --text cat --layer 1
expect_error "attn model run has LaTeX only for one head's walkthrough" \
    "attn model: --format: a run is json, text or markdown (latex and steps are for one head's walkthrough, --layer L --head H)" '' \
    model run --model "$model" --text cat --format latex
printf '{"hidden_size": 8}' >"$work/bad-config.json"
mkdir -p "$work/bad" && cp "$work/bad-config.json" "$work/bad/config.json"
expect_error "attn model names what config.json lacks" \
    'attn model: config.json: vocab_size is missing' '' \
    model run --model "$work/bad" --text hi
expect_error "attn model names its subcommands" \
    'attn model: expected run, generate or train (attn model --help)' '' model walk

# ---- attn model train: a small run twice writes the same bytes (make model's
# promise, on a run that takes a second), which attn model run then loads ----
trained=$work/trained
mkdir -p "$trained/a" "$trained/b"
head -c 4000 models/kjv-genesis/genesis.txt >"$trained/text.txt"
for copy in a b; do
    "$attn" model train --text "$trained/text.txt" --out "$trained/$copy" --hidden 16 \
        --intermediate 32 --layers 1 --heads 2 --kv-heads 1 --seq 16 --batch 2 --steps 8 \
        >"$trained/$copy.json" 2>"$trained/$copy.err" ||
        fail "attn model train trains a small model" "$(cat "$trained/$copy.err")"
done
if cmp -s "$trained/a/model.safetensors" "$trained/b/model.safetensors" &&
    cmp -s "$trained/a/config.json" "$trained/b/config.json"; then
    pass
else
    fail "attn model train writes the same bytes from the same seed"
fi
if grep -q '"held_out_bytes": 400, .*"held_out_loss": [0-9]' "$trained/a.json" &&
    "$attn" model run --model "$trained/a" --text "And God" >/dev/null; then
    pass
else
    fail "attn model train reports the held-out loss and writes a model attn model run loads" \
        "$(cat "$trained/a.json")"
fi
expect_error "attn model train needs its text and folder" \
    'attn model train: --text FILE and --out DIR are needed' '' model train --steps 3
expect_error "attn model train names an option it does not know" \
    'attn model train: unknown option --layerz (attn model train --help)' '' model train --layerz 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
