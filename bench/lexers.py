"""`python -m bench lexers [--size N] [--names NAME …]`: which Pygments lexers a fence may use.

A fence may name any lexer Pygments has, and a lexer is a set of regular expressions: some
backtrack badly on input a reply can hold (a block of indentation, a long line of one
punctuation mark, an unterminated string). Each candidate (`CANDIDATES`, the languages
replies use; or `--names`) tokenizes every hostile input (`tests.hostile_markdown.hostile_code`)
at `--size` characters, in a child process of its own that is killed past `--limit` seconds.

Many lexers look ahead to the end of the block for each token on some of these inputs, so
their total time grows with the square of the block; the renderer's time budget stops those.
What no budget can stop is one token that takes long: a lexer passes when no token took
longer than `--gap` milliseconds. The passing lexers' class names are what
`ui.text.code_highlight.ALLOWED_LEXERS` lists; `--check` compares the two. "code ms" is a
plain Python-like input's time: what a lexer costs on ordinary code.

Figures go to `bench/results/lexers.json`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from bench.report import print_table, save
from tests.hostile_markdown import hostile_code

#: The languages replies use, by one alias each (the allowlist maps every alias of a class).
CANDIDATES = (
    "python", "pycon", "javascript", "typescript", "jsx", "tsx", "json", "bash", "console",
    "powershell", "c", "cpp", "csharp", "java", "go", "rust", "ruby", "php", "sql",
    "postgresql", "mysql", "yaml", "toml", "ini", "html", "xml", "css", "scss", "diff",
    "markdown", "kotlin", "swift", "scala", "lua", "perl", "r", "dart", "objective-c",
    "haskell", "elixir", "erlang", "clojure", "dockerfile", "make", "nginx", "graphql",
    "protobuf", "terraform", "text", "systemd", "registry", "latex", "vim", "julia", "zig",
    "nim", "ocaml", "fsharp", "groovy", "matlab", "fortran", "cmake", "docker", "properties",
)  # fmt: skip
#: Each input is tokenized for at most this long (the renderer's budget stops it sooner).
STOP_S = 0.1
#: Runs per input; the quickest counts.
RUNS = 3


def measure_one(name: str, size: int) -> dict[str, Any]:
    """Per hostile input, the most CPU time one token took and the time spent (stopped after
    `STOP_S`, as the renderer's budget stops it), for one lexer in this process: CPU time,
    so that other processes on the machine do not count."""
    from pygments.lexers import get_lexer_by_name

    lexer = get_lexer_by_name(name, stripnl=False, ensurenl=False)
    figures: dict[str, list[float]] = {}
    for key, text in hostile_code(size).items():
        runs = []
        for _ in range(RUNS):
            start = last = time.thread_time()
            gap = 0.0
            for _token in lexer.get_tokens(text):
                now = time.thread_time()
                gap, last = max(gap, now - last), now
                if now - start > STOP_S:
                    break
            runs.append([gap, time.thread_time() - start])
        figures[key] = min(runs)  # the machine's pauses are not the lexer's
    return {"lexer": type(lexer).__name__, "figures": figures}


def scan(names: list[str], size: int, limit: float, gap_ms: float) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for name in names:
        args = [sys.executable, "-m", "bench", "lexers", "--child", name, "--size", str(size)]
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=limit, check=True)
        except subprocess.TimeoutExpired:
            results.append({"alias": name, "lexer": "?", "gap_ms": None, "passes": False})
            continue
        except subprocess.CalledProcessError:
            continue  # no such lexer in this Pygments
        found = json.loads(out.stdout.strip().splitlines()[-1])
        figures = found["figures"]
        worst = max(figures, key=lambda k: figures[k][0])
        worst_gap_ms = figures[worst][0] * 1000
        results.append(
            {
                "alias": name,
                "lexer": found["lexer"],
                "worst_input": worst,
                "gap_ms": round(worst_gap_ms, 2),
                "code_ms": round(figures["code"][1] * 1000, 1),
                "passes": worst_gap_ms <= gap_ms,
            }
        )
    return results


def main(argv: list[str]) -> int:
    from ui.text.code_highlight import ALLOWED_LEXERS, MAX_HIGHLIGHT_CHARS

    parser = argparse.ArgumentParser(prog="python -m bench lexers")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=MAX_HIGHLIGHT_CHARS)
    parser.add_argument("--names", nargs="*", default=list(CANDIDATES))
    parser.add_argument("--limit", type=float, default=40.0, help="seconds before a kill")
    parser.add_argument("--gap", type=float, default=3.0, help="ms one token may take")
    parser.add_argument("--check", action="store_true", help="compare with ALLOWED_LEXERS")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_one(args.child, args.size)))
        return 0
    results = scan(args.names, args.size, args.limit, args.gap)
    rows = [
        [r["alias"], r["lexer"], r.get("worst_input", "(killed)"), r["gap_ms"],
         r.get("code_ms", "-"), "yes" if r["passes"] else "NO"]
        for r in results
    ]  # fmt: skip
    header = ["alias", "lexer", "slowest token's input", "token ms", "code ms", "passes"]
    print_table(f"Pygments lexers on hostile input of {args.size:,} characters", header, rows)
    passing = sorted({r["lexer"] for r in results if r["passes"]})
    print("passing:", ", ".join(passing))
    save("lexers", {"size": args.size, "gap_ms": args.gap, "lexers": results})
    if args.check:
        measured = {r["lexer"] for r in results}
        wrong = sorted((ALLOWED_LEXERS & measured) - set(passing))
        print("allowed but failing:", ", ".join(wrong) or "none")
        return 1 if wrong else 0
    return 0
