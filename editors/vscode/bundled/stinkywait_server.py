"""Starts the language server bundled in the stinkywait VS Code extension.

The extension runs `<python> stinkywait_server.py` with any Python >= 3.11 it finds; the
server's sources (`tool/`: stinkywait_core, stinkywait_lsp) and their pure-Python
dependencies (`libs/`: pygls, lsprotocol, lark, cattrs, attrs) come first on the import path,
so nothing has to be installed and an installed copy of any of them is not used.
"""

import os
import sys

if sys.version_info < (3, 11):
    sys.stderr.write("ERROR stinkywait: the language server needs Python 3.11 or newer; this is "
                     f"{sys.version.split()[0]} ({sys.executable})\n")
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[0:0] = [os.path.join(HERE, "tool"), os.path.join(HERE, "libs")]

from stinkywait_lsp.__main__ import main  # noqa: E402 - after the path is set

if __name__ == "__main__":
    sys.exit(main())
