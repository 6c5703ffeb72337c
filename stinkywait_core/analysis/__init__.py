"""Analysis layer: classification, CFG orders and dominance, implicit LDS deps, SSA def-use."""
