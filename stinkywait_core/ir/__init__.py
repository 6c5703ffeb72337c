"""IR layer: operands, modifiers, instructions, blocks, functions, modules."""

from .nodes import Block, Function, Instruction, Modifier, Module, Span, TargetInfo, bulk_construction
from .operands import FloatImm, Imm, Operand, Reg, Special, Str, reg_units

__all__ = ["Block", "Function", "Instruction", "Modifier", "Module", "Span", "TargetInfo",
           "FloatImm", "Imm", "Operand", "Reg", "Special", "Str", "reg_units", "bulk_construction"]
