"""`stinkywait check --format text|json|sarif`: the reports of `check` as a person, a script
or a code-scanning service reads them.

text   compiler-style lines (`file:line:col: severity: message [code]`, notes at the
       producer), one summary line per file and one for the run; streamed per file.
json   one document: every file's findings with their fix (the line to insert or delete).
sarif  SARIF 2.1.0 (the OASIS schema; GitHub code scanning and other viewers read it): one
       run, one rule per finding kind, results with related locations and fixes; unreadable
       files are tool execution notifications.
"""

from __future__ import annotations

import json
import os

from .. import __version__, findings
from .check import NOT_AMDGPU, FileReport

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any, TextIO

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/stinkywait/stinkywait"
#: descriptions of the rules that are not review findings
_OTHER_RULES = {NOT_AMDGPU: "A file named for checking is not AMDGPU assembly (no AMDGPU target, no AMDGPU "
                            "instruction); nothing in it was checked."}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def counts(rep: FileReport) -> dict[str, int]:
    out = {kind: 0 for kind in findings.CODES}
    for f in rep.findings:
        kind = f.get("kind")
        if kind in out:
            out[kind] += 1
    return out


def summary_text(c: dict[str, int]) -> str:
    return (f"{_plural(c[findings.MISSING], 'missing wait')}, {c[findings.UNPROVEN]} unproven "
            f"(disjointness not proved), {c[findings.REDUNDANT] + c[findings.STRICTER]} redundant or "
            "stricter than needed")


class TextReport:
    """Writes each file's report as it arrives."""

    def __init__(self, out: TextIO, err: TextIO):
        self.out, self.err = out, err
        self.total = {kind: 0 for kind in findings.CODES}
        self.files = self.skipped = 0

    def add(self, rep: FileReport) -> None:
        if rep.skipped:
            self.skipped += 1
            return
        self.files += 1
        if rep.error is not None:
            print(f"{rep.path}:1:1: error: {rep.error}", file=self.err)
            return
        for d in rep.diagnostics:
            print(f"{rep.path}:{d['line']}:{d['column']}: {d['severity']}: {d['message']}", file=self.err)
        if any(d["code"] == NOT_AMDGPU for d in rep.diagnostics):
            print(f"{rep.path}: not checked: not AMDGPU assembly", file=self.out)
            return
        if rep.exhaustive is not None:
            if rep.exhaustive["text"]:
                print(rep.exhaustive["text"], file=self.out)
            violations = rep.exhaustive["violations"]
            proven = sum(1 for v in violations if v["severity"] == "error")
            unproven = len(violations) - proven
            ok = not proven and not rep.has_errors
            tail = f" ({_plural(unproven, 'hazard')} resting on an LDS overlap not proven)" if unproven else ""
            print(f"{rep.path}: exhaustive check {'passed' if ok else 'failed'}{tail}", file=self.out)
            return
        for f in rep.findings:
            print(f"{rep.path}:{f['line']}:{f['column']}: {f['severity']}: {f['message']} [{f['code']}]", file=self.out)
            for r in f["related"]:
                print(f"{rep.path}:{r['line']}:{r['column']}: note: {r['message']}", file=self.out)
        c = counts(rep)
        for k, v in c.items():
            self.total[k] += v
        print(f"{rep.path}: {summary_text(c)}", file=self.out)

    def finish(self) -> None:
        if self.files + self.skipped > 1:
            skipped = f", {self.skipped} .s/.asm without an AMDGPU marker skipped" if self.skipped else ""
            print(f"checked {_plural(self.files, 'file')}{skipped}: {summary_text(self.total)}", file=self.out)


def json_document(reports: list[FileReport]) -> dict[str, Any]:
    files = []
    total = {kind: 0 for kind in findings.CODES}
    for rep in reports:
        if rep.skipped:
            continue
        c = counts(rep)
        for k, v in c.items():
            total[k] += v
        entry: dict[str, Any] = {"file": rep.path, "error": rep.error, "diagnostics": rep.diagnostics,
                                 "findings": rep.findings, "counts": c}
        if rep.exhaustive is not None:
            entry["exhaustive"] = {"ok": rep.exhaustive["ok"], "violations": rep.exhaustive["violations"]}
        files.append(entry)
    return {"tool": "stinkywait", "version": __version__, "files": files, "counts": total,
            "skipped": [rep.path for rep in reports if rep.skipped]}


# -- SARIF --------------------------------------------------------------------------------


def _artifact(path: str, base: str) -> dict[str, Any]:
    """A file as a SARIF artifact location: relative to `base` (the `%SRCROOT%` base id) when
    inside it, else an absolute file URI."""
    from urllib.parse import quote
    from pathlib import Path
    if path.startswith("<"):
        return {"uri": quote(path)}
    full = os.path.abspath(path)
    rel = os.path.relpath(full, base)
    if not rel.startswith(os.pardir + os.sep) and rel != os.pardir and not os.path.isabs(rel):
        return {"uri": quote(rel.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(full).as_uri()}


def _region(line: int, column: int, end_line: int | None = None, end_column: int | None = None) -> dict[str, Any]:
    region = {"startLine": max(1, line), "startColumn": max(1, column)}
    if end_line is not None and end_column is not None and (end_line, end_column) >= (line, column):
        region["endLine"] = end_line
        region["endColumn"] = max(1, end_column)
    return region


def _fix(f: dict[str, Any], rep: FileReport, artifact: dict[str, Any]) -> dict[str, Any] | None:
    fix = f.get("fix")
    if not fix:
        return None
    if "insertLine" in fix:
        line, text = fix["insertLine"], fix["insertText"]
        if line <= rep.lines or rep.ends_with_newline or not rep.lines:
            # before a line (or at the very end, after the final line break)
            at = {"startLine": max(1, line), "startColumn": 1, "endLine": max(1, line), "endColumn": 1}
        else:  # after a last line that has no line break: break it first
            at = {"startLine": rep.lines, "startColumn": rep.last_len + 1, "endLine": rep.lines,
                  "endColumn": rep.last_len + 1}
            text = "\n" + text.rstrip("\n")
        return {"description": {"text": f"Insert {text.strip()}"},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": [
                    {"deletedRegion": at, "insertedContent": {"text": text}}]}]}
    if "deleteLine" in fix:
        line = fix["deleteLine"]
        return {"description": {"text": "Remove the redundant wait"},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": [
                    {"deletedRegion": {"startLine": line, "startColumn": 1, "endLine": line + 1, "endColumn": 1}}]}]}
    return None


def sarif_document(reports: list[FileReport], base: str | None = None) -> dict[str, Any]:
    base = os.path.abspath(base or os.getcwd())
    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}

    def rule(code: str, kind: str | None, level: str) -> int:
        if code not in rule_index:
            rule_index[code] = len(rules)
            text = findings.DESCRIPTIONS.get(kind or "") or _OTHER_RULES.get(code, f"stinkywait diagnostic `{code}`.")
            entry: dict[str, Any] = {"id": code, "shortDescription": {"text": text.split(";")[0].rstrip(".") + "."},
                                     "fullDescription": {"text": text},
                                     "defaultConfiguration": {"level": _SARIF_LEVEL.get(level, "warning")}}
            if kind == findings.UNPROVEN:
                entry["helpUri"] = f"{INFORMATION_URI}/blob/main/{findings.TOKEN_HELP}"
            rules.append(entry)
        return rule_index[code]

    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for rep in reports:
        if rep.skipped:
            continue
        artifact = _artifact(rep.path, base)
        if rep.error is not None:
            notifications.append({"level": "error", "message": {"text": f"{rep.path}: {rep.error}"},
                                  "locations": [{"physicalLocation": {"artifactLocation": artifact}}]})
            continue
        items = list(rep.diagnostics) + list(rep.findings)
        if rep.exhaustive is not None:
            items += rep.exhaustive["violations"]
        for f in items:
            level = f["severity"]
            kind = f.get("kind")
            res: dict[str, Any] = {
                "ruleId": f["code"], "ruleIndex": rule(f["code"], kind, level),
                "level": _SARIF_LEVEL.get(level, "warning"), "message": {"text": f["message"]},
                "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": _region(
                    f["line"], f["column"], f.get("endLine"), f.get("endColumn"))}}]}
            related = [{"id": i, "message": {"text": r["message"]},
                        "physicalLocation": {"artifactLocation": artifact, "region": _region(r["line"], r["column"])}}
                       for i, r in enumerate(f.get("related") or ())]
            if related:
                res["relatedLocations"] = related
            fix = _fix(f, rep, artifact)
            if fix is not None:
                res["fixes"] = [fix]
            results.append(res)
    from pathlib import Path
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "stinkywait", "version": __version__, "informationUri": INFORMATION_URI,
                            "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(base).as_uri() + "/"}},
        "invocations": [{"executionSuccessful": not notifications,
                         "toolExecutionNotifications": notifications}],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def write_document(doc: dict[str, Any], out: TextIO) -> None:
    json.dump(doc, out, indent=2)
    out.write("\n")
