"""stinkywait core: parsers, IR, analyses and the StinkyWaitCntInsertionPass (no LSP imports)."""

__version__ = "0.1.0"
