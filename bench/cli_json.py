"""`make bench`, the CLI against Python's json module: build/attn reading a
scaled dot-product problem of n x 64 random queries, keys and values from
a file, computing it and writing its result as JSON (end to end, a process
of its own, its output to /dev/null), next to json.dumps of the same result
object alone, in turn in one run so that both see the same load. Prints
each one's fastest round and the ratio, the CLI's peak memory beside the
size of its output, and checks that the CLI's result reads back to the
same numbers as the object json.dumps wrote.
Usage: [ATTN_CLI=path/to/attn] /usr/bin/python3 bench/cli_json.py [rounds] [n ...]
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ATTN = os.environ.get("ATTN_CLI", str(Path(__file__).resolve().parents[1] / "build" / "attn"))
D = 64


def problem(n, rng):
    def matrix():
        return [[rng.uniform(-1, 1) for _ in range(D)] for _ in range(n)]
    return {"kind": "scaledDotProduct", "q": matrix(), "k": matrix(), "v": matrix()}


def run_cli(path):
    """Wall time of one end-to-end run, and its peak resident memory in KiB (GNU time's %M: a child of
    this process would count the memory of the fork it was started from)."""
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M", ATTN, path, "-o", "/dev/null"],
                         check=True, capture_output=True, text=True)
    return time.perf_counter() - start, int(run.stderr.split()[-1])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    sizes = [int(n) for n in sys.argv[2:]] or [500, 1000]
    rng = random.Random(35)
    print(f"CLI vs Python's json, d = {D}: build/attn end to end (read, compute, write) "
          f"and json.dumps of its result, the fastest of {rounds} rounds taken in turn")
    print(f"{'n':>6} {'build/attn':>12} {'json.dumps':>12} {'ratio':>7} {'output':>10} {'CLI peak':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            path = str(Path(folder) / f"problem-{n}.json")
            Path(path).write_text(json.dumps(problem(n, rng)))
            text = subprocess.run([ATTN, path], check=True, capture_output=True, text=True).stdout
            result = json.loads(text)
            cli, dumps = [], []
            for _ in range(rounds):
                seconds, peak = run_cli(path)
                cli.append(seconds)
                start = time.perf_counter()
                written = json.dumps(result, separators=(",", ":"))
                dumps.append(time.perf_counter() - start)
            if json.loads(written) != result:
                raise AssertionError("json.dumps did not write the CLI's result back")
            print(f"{n:>6} {min(cli) * 1e3:>9.0f} ms {min(dumps) * 1e3:>9.0f} ms {min(cli) / min(dumps):>6.2f}x "
                  f"{len(text) / 2**20:>7.1f} MB {peak / 1024:>7.0f} MB")


if __name__ == "__main__":
    main()
