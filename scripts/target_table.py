"""Print the supported-targets table (stinkywait_core/target_table.py), or with --write put it
into README.md between its markers."""

from __future__ import annotations

import sys
from pathlib import Path

from stinkywait_core.target_table import markdown, with_table

README = Path(__file__).resolve().parents[1] / "README.md"


def main(argv: list[str]) -> int:
    if "--write" in argv:
        README.write_text(with_table(README.read_text()))
        return 0
    print(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
