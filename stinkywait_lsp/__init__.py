"""stinkywait language server: wait-count inlay hints, diagnostics, quick fixes, FIFO hovers
and producer navigation for gfx1250 assembly and STIR, rendered from `stinkywait_core`."""

__version__ = "0.1.0"
