"""import-linter contract types of our own (`contract_types` in pyproject.toml).

import-linter sees a library as one node (`include_external_packages` squashes it to its top
package), and its `forbidden` contract refuses a library's subpackage. `insides` reads the
import lines themselves, so it can say which of a library's modules a package may not import.
"""

from __future__ import annotations

import re
from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?\s*(.*)$")
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)")


def _within(name: str, prefixes: list[str]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def _imported(line: str) -> list[str]:
    """The dotted names an import line may bring in (`from a import b` may be module a.b)."""
    found = _FROM.match(line)
    if found is None:
        plain = _IMPORT.match(line)
        return [plain.group(1)] if plain else []
    module, names = found.groups()
    words = [word.split(" as ")[0].strip(" ()\\") for word in names.split(",")]
    return [module, *(f"{module}.{word}" for word in words if word.isidentifier())]


class InsidesContract(Contract):
    """No module under `source_modules`, except those under `allowed_modules`, imports any
    module under `forbidden_modules` (dotted names inside external packages); `ignore_imports`
    names single exceptions, `importer -> imported` (each must still be found)."""

    type_name = "insides"

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField(), required=False)
    forbidden_modules = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        sources: list[str] = list(self.source_modules)  # type: ignore[arg-type]
        allowed: list[str] = list(self.allowed_modules or [])  # type: ignore[arg-type]
        forbidden: list[str] = list(self.forbidden_modules)  # type: ignore[arg-type]
        ignored = {
            tuple(part.strip() for part in pair.split("->"))
            for pair in list(self.ignore_imports or [])  # type: ignore[arg-type]
        }
        unused = set(ignored)
        tops = {name.partition(".")[0] for name in forbidden}
        found: list[dict[str, Any]] = []
        for module in sorted(graph.modules):
            if not _within(module, sources) or _within(module, allowed):
                continue
            for top in tops:
                if top not in graph.modules:
                    continue
                for detail in graph.get_import_details(importer=module, imported=top):
                    line = str(detail["line_contents"])
                    names = _imported(line)
                    if any((module, name) in ignored for name in names):
                        unused.difference_update((module, name) for name in names)
                    elif any(_within(name, forbidden) for name in names):
                        found.append(
                            {"importer": module, "line": detail["line_number"], "text": line}
                        )
        for importer, imported in sorted(unused):
            # An exception that no longer applies would let a later import through unseen.
            found.append({"importer": importer, "line": 0, "text": f"unused: -> {imported}"})
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["found"]:
            output.print_error(f"{item['importer']}:{item['line']}: {item['text']}", bold=False)
            output.new_line()
