"""Load spec YAML safely, keeping the line and column of every key and value.

PyYAML's SafeLoader silently keeps the last of two equal keys and reads `on`/`off`/`yes`/`no` as booleans;
a contract spec must do neither, so this module composes the node graph itself and builds plain Python
values from it, recording a `Mark` for every path.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..errors import Mark, SpecError

if TYPE_CHECKING:  # (imported where it is made: the trust check reads spec files with this loader, and no expression)
    from ..expr.nodes import Origin

# A spec path is the tuple of keys and indexes leading to a value, e.g. ("failpoints", 3, "id").
SpecPath = tuple[str | int, ...]


class _ContractYamlLoader(yaml.SafeLoader):
    """SafeLoader whose booleans are only true/false (YAML 1.2), so `on`, `off`, `yes`, `no` stay strings."""


# The same loader on libyaml's parser, when PyYAML was built with it: it composes the node graph several times
# faster. A file it refuses is parsed again by the pure-Python loader, so every error reads the same either way.
_FastContractYamlLoader: type[Any] = (
    type("_FastContractYamlLoader", (yaml.CSafeLoader,), {}) if getattr(yaml, "__with_libyaml__", False) else _ContractYamlLoader
)

_loader: type[Any]
for _loader in (_ContractYamlLoader, _FastContractYamlLoader):
    _loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


@dataclass
class LoadedFile:
    """One spec file: its data as plain Python values, and where each value and key stands."""

    name: str
    data: Any
    value_marks: dict[SpecPath, Mark] = field(default_factory=dict)
    key_marks: dict[SpecPath, Mark] = field(default_factory=dict)
    styles: dict[SpecPath, str] = field(default_factory=dict)  # a string value's YAML style: '"', "'", '|', '>'
    lines: list[str] = field(default_factory=list)

    def mark(self, path: SpecPath) -> Mark:
        """The mark of the value at `path`, or of its nearest enclosing value."""
        while path not in self.value_marks and path:
            path = path[:-1]
        return self.value_marks.get(path, Mark(self.name, 1, 1))

    def value(self, path: SpecPath) -> Any:
        """The value at `path` (which must name one)."""
        value = self.data
        for step in path:
            value = value[step]
        return value

    def origin(self, path: SpecPath) -> Origin:
        """Where the string value at `path` starts, for an expression's errors: exact for a plain or quoted value
        written on one line as it reads and for a `|` block (each of its lines at the block's indentation); the
        value's start otherwise (folded, escaped, or a plain value over several lines)."""
        from ..expr.nodes import Origin

        mark = self.mark(path)
        style = self.styles.get(path, "")
        value = self.value(path)
        start = mark.column + (1 if style in ('"', "'") else 0)
        written = self.lines[mark.line - 1][start - 1 :] if 0 < mark.line <= len(self.lines) else ""
        if style in ("", '"', "'"):
            return Origin(self.name, mark.line, start, exact=isinstance(value, str) and written.startswith(value))
        if style == "|":
            for number in range(mark.line, len(self.lines)):  # the lines after the indicator's
                text = self.lines[number]
                if text.strip():
                    indent = len(text) - len(text.lstrip(" ")) + 1
                    return Origin(self.name, number + 1, indent, indent)
        return Origin(self.name, mark.line, mark.column, exact=False)

    def key_mark(self, path: SpecPath) -> Mark:
        """The mark of the key that names `path` (falls back to the value's mark)."""
        return self.key_marks.get(path) or self.mark(path)


def load_spec_file(path: Path, display_name: str) -> tuple[LoadedFile | None, list[SpecError]]:
    """Read one YAML file; return it with its marks, or None and the errors that stop it being read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return None, [SpecError(Mark(display_name, 1, 1), f"cannot read the file: {error}")]
    conflict = _MERGE_CONFLICT.search(text)
    if conflict is not None:
        line = text.count("\n", 0, conflict.start()) + 1
        return None, [SpecError(Mark(display_name, line, 1), "merge-conflict markers: resolve the conflict in this file (keep the contract both branches meant), then regenerate")]
    try:
        root = _compose(text, _FastContractYamlLoader)
    except (yaml.YAMLError, RecursionError):
        try:
            root = _compose(text, _ContractYamlLoader)
        except yaml.MarkedYAMLError as error:
            return None, [SpecError(_mark_of_problem(error, display_name), f"invalid YAML: {error.problem}")]
        except RecursionError:
            return None, [SpecError(Mark(display_name, 1, 1), _TOO_DEEP)]
    loaded = LoadedFile(display_name, None, lines=text.splitlines())
    errors: list[SpecError] = []
    if root is None:
        return None, [SpecError(Mark(display_name, 1, 1), "the file is empty")]
    try:
        loaded.data = _build(root, (), loaded, errors, _ContractYamlLoader(""))
    except yaml.MarkedYAMLError as error:
        return None, [SpecError(_mark_of_problem(error, display_name), f"invalid YAML: {error.problem}")]
    except RecursionError:
        return None, [SpecError(Mark(display_name, 1, 1), _TOO_DEEP)]
    return loaded, errors


# A line git writes where a merge could not combine two versions; YAML would report it as a puzzling syntax error.
_MERGE_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)


def _compose(text: str, loader_class: type[yaml.SafeLoader]) -> yaml.Node | None:
    loader = loader_class(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


_TOO_DEEP = "the YAML is nested too deeply to be a spec"
# Text a reviewer reads must show what it says: no C0 control but the newline, no DEL or C1 control, no bidi
# embedding, override or isolate, no lone surrogate (a NUL makes CONTRACT.md binary to git; ESC repaints a
# terminal; U+202E reverses what follows).
_HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def hidden_character(text: str) -> str | None:
    """A description of the first character in `text` a reviewer could not see, or None."""
    found = _HIDDEN.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def _check_scalar(value: Any, node: yaml.Node, loaded: LoadedFile, errors: list[SpecError], what: str) -> None:
    if isinstance(value, str):
        hidden = hidden_character(value)
        if hidden is not None:
            errors.append(SpecError(_mark_of(node, loaded.name), f"{what} holds the invisible or control character {hidden}; the spec is text a reviewer must be able to read"))
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        errors.append(SpecError(_mark_of(node, loaded.name), f"{what} is an integer out of range (at most 2**63 - 1 in magnitude)"))
    elif isinstance(value, float) and not math.isfinite(value):
        errors.append(SpecError(_mark_of(node, loaded.name), f"{what} is {value!r}: the spec takes finite numbers only (JSON has no NaN or infinity)"))


_COLLECTION_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


def _mark_of_problem(error: yaml.MarkedYAMLError, file_name: str) -> Mark:
    problem_mark = error.problem_mark or error.context_mark
    return Mark(file_name, problem_mark.line + 1, problem_mark.column + 1) if problem_mark else Mark(file_name, 1, 1)


def _mark_of(node: yaml.Node, file_name: str) -> Mark:
    return Mark(file_name, node.start_mark.line + 1, node.start_mark.column + 1)


def _record(node: yaml.Node, path: SpecPath, loaded: LoadedFile) -> None:
    loaded.value_marks[path] = _mark_of(node, loaded.name)
    if isinstance(node, yaml.ScalarNode) and node.style:  # quoted or a block: where an expression's text starts
        loaded.styles[path] = node.style


MOST_NODES = 200_000  # the values a spec may build, aliases expanded: a chain of aliases cannot expand without bound


def _build(
    node: yaml.Node, path: SpecPath, loaded: LoadedFile, errors: list[SpecError], loader: yaml.SafeLoader, budget: list[int] | None = None,
    ancestors: frozenset[int] = frozenset(),
) -> Any:
    # Standard YAML: an alias is the value its anchor names, built again where the alias stands (its marks are the
    # anchor's: an error in it is reported where its text is); `<<` merges mappings, the keys written beside it
    # winning. An alias of a collection it stands inside is refused (it would never end), and so is a spec whose
    # aliases expand past MOST_NODES values.
    budget = [0] if budget is None else budget
    budget[0] += 1
    if budget[0] > MOST_NODES:
        if budget[0] == MOST_NODES + 1:
            errors.append(SpecError(_mark_of(node, loaded.name), f"the spec's aliases expand to more than {MOST_NODES} values"))
        return None
    if id(node) in ancestors:
        errors.append(SpecError(_mark_of(node, loaded.name), "an alias of a collection it stands inside (a value that never ends)"))
        return None
    inside = ancestors | {id(node)}
    _record(node, path, loaded)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _COLLECTION_TAGS:
        kind = node.tag.rpartition(":")[2] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
        errors.append(SpecError(_mark_of(node, loaded.name), f"a YAML {kind} collection; the spec holds plain lists and mappings only"))
        return None
    if isinstance(node, yaml.MappingNode):
        return _mapping(node, path, loaded, errors, loader, budget, inside)
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (index,), loaded, errors, loader, budget, inside) for index, item in enumerate(node.value)]
    try:
        value = loader.construct_object(node, deep=True)  # a tag it has no constructor for raises: invalid YAML
    except ValueError as error:  # e.g. an integer of thousands of digits (Python refuses to convert it)
        errors.append(SpecError(_mark_of(node, loaded.name), f"a value this spec cannot hold: {error}"))
        return None
    if node.tag not in _JSON_TAGS:  # a date, a timestamp, !!binary: JSON has none of them
        kind = node.tag.rpartition(":")[2] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
        errors.append(SpecError(_mark_of(node, loaded.name), f"a YAML {kind} value ({node.value[:40]!r}); the spec holds JSON values only (strings, numbers, true/false, null, lists, mappings): quote it to keep it as text"))
        return None
    if isinstance(node, yaml.ScalarNode) and not node.style:  # plain (libyaml says '', the pure-Python parser None); quoted is text
        ambiguity = _yaml_versions_differ(node.value, value)
        if ambiguity is not None:
            errors.append(SpecError(_mark_of(node, loaded.name), ambiguity))
            return None
    _check_scalar(value, node, loaded, errors, "a value")
    return value


def _mapping(node: yaml.MappingNode, path: SpecPath, loaded: LoadedFile, errors: list[SpecError], loader: yaml.SafeLoader, budget: list[int], inside: frozenset[int]) -> Any:
    result: dict[str, Any] = {}
    merged: dict[str, Any] = {}  # (what `<<` brings: a key written in the mapping wins)
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if not isinstance(source, yaml.MappingNode):
                    errors.append(SpecError(_mark_of(key_node, loaded.name), "a merge key ('<<') takes a mapping, or a list of mappings"))
                    continue
                built = _build(source, path, loaded, errors, loader, budget, inside)
                for key, value in (built or {}).items():
                    merged.setdefault(key, value)
            continue
        if not isinstance(key_node, yaml.ScalarNode):
            errors.append(SpecError(_mark_of(key_node, loaded.name), "a key must be a plain string"))
            continue
        key = key_node.value
        _check_scalar(key, key_node, loaded, errors, "a key")
        if key in result:
            first = loaded.key_marks[path + (key,)]
            errors.append(SpecError(_mark_of(key_node, loaded.name), f"duplicate key '{key}' (first defined at {first})"))
            continue
        loaded.key_marks[path + (key,)] = _mark_of(key_node, loaded.name)
        result[key] = _build(value_node, path + (key,), loaded, errors, loader, budget, inside)
    for key, value in merged.items():
        result.setdefault(key, value)
    _record(node, path, loaded)  # (a merged mapping's marks stood at this path: the mapping's own are its own)
    return result


_JSON_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null"))
# The YAML 1.2 core schema's numbers: what an editor or another YAML library reading the file as YAML 1.2 sees.
_CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


def _core_number(text: str) -> int | float | None:
    if _CORE_INT.fullmatch(text):
        return int(text[2:], 8) if text.startswith("0o") else int(text, 16) if text.startswith("0x") else int(text, 10)
    if _CORE_FLOAT.fullmatch(text):
        return float(text.replace(".inf", "inf").replace(".Inf", "inf").replace(".INF", "inf").lower().replace(".nan", "nan"))
    return None


def _yaml_versions_differ(text: str, value: Any) -> str | None:
    """Why a plain scalar is refused: YAML 1.1 (PyYAML, this loader) and YAML 1.2 (most editors and other
    libraries) read it differently, e.g. `0644` (420 or 644), `12:30` (750 or text), `1_000`, `1e5`, `0o17`.
    Refused rather than read either way: a reviewer must not have to know which YAML a tool speaks."""
    core = _core_number(text)
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if core is None and not numeric:
        return None
    if numeric and core is not None and type(core) is type(value) and (core == value or core != core and value != value):
        return None
    as_11 = repr(value) if numeric else f"the text {text!r}"
    as_12 = repr(core) if core is not None else f"the text {text!r}"
    meanings = " or ".join(dict.fromkeys(repr(number) for number in (value if numeric else None, core) if number is not None))
    return f"{text!r} is {as_11} in YAML 1.1 but {as_12} in YAML 1.2: quote it if it is text, or write the number as both read it ({meanings})"
