"""Command-line tools: `stinkywait` (plan/insert/check) and `stinkywait-opt` (upstream-compatible driver).

Each tool lives in its own module with a `main(argv=None) -> int` entry point so tests can
call it in-process and the console scripts declared in pyproject stay one-liners.
"""
