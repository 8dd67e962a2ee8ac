"""The walk's loop specialised for a contract, written into generated/projector_table.py (`walk_loop`): the
statements resume_contract/core/walk_loop.py describes, naming each tool content class (by its tag, from
generated/runtime_event.py's CONTENT_KINDS) and attribute; None when the contract cannot have one (a name that is
not a plain ASCII identifier, hidden rows, a test of the contract that may judge any row): the walk then keeps its
generic loop. tests/test_walk_loop.py holds the two loops equal.
"""

from __future__ import annotations

import keyword

from resume_contract.core.table import ProjectorTable


def walk_loop_source(table: ProjectorTable) -> tuple[tuple[str, ...], str] | None:
    """(the tool content kinds the loop reads, in order; the function's source), or None."""
    kinds = tuple(table.tool_contents)
    tested = table.tested_fields
    hidden = table.hidden
    if tested is None or (hidden is not None and hidden.needs is None):
        return None
    # A row the hidden test may hold for holds one of its fields: such a row, as one a test may judge, is walked by
    # the generic loop (and a result whose call was hidden too).
    hidden_fields = [] if hidden is None or hidden.needs is None else [name for name, _ in hidden.needs]
    unset = list(dict.fromkeys(["status", table.terminal_flag[0], *tested, *hidden_fields]))
    names = [table.partial_attribute, *unset]
    for read in table.tool_contents.values():
        names += [name for name in (read.call_id, read.tool_name, read.arguments, read.error_flag) if name is not None]
    if not all(name.isascii() and name.isidentifier() and not keyword.iskeyword(name) for name in names):
        return None
    unpacked = ", ".join(
        f"({'OPEN' if read.opens else 'STEPS'}{n}, {(('OPEN' if read.opens else 'STEPS') + f'{n}_FAILED') if read.error_flag is not None else '_'})"
        for n, read in enumerate(table.tool_contents.values())
    )
    classes = ", ".join(f"class{n}" for n in range(len(kinds)))
    lines = [
        "def walk_loop(walk: Any, events: Any, first_index: int) -> None:  # noqa: C901 - one flat loop, a case a branch",
        '    """The walk of `events` (the first at `first_index`), its common cases taken here (core/walk_loop.py)."""',
        f"    {unpacked}{',' if len(kinds) == 1 else ''} = loop_steps(walk.reads, LOOP_KINDS)",
        *([f"    {classes}{',' if len(kinds) == 1 else ''} = LOOP_CLASSES"] if kinds else []),
        "    operations = walk.operations",
        "    find_operation = operations.get",
        "    storable = walk._storable",
        "    settled = walk._settled",
        "    not_replayed = walk.not_replayed",
        "    opened = walk._opened.append if walk.store is not None else None",
        "    call_id_hash = walk.call_id_hash",
        "    copy_arguments = walk.copy_arguments",
        "    terminal_index = walk.terminal_index",
        "    next_index = walk._next_index",
        *(["    answered_now = walk._answered.append if walk.store is not None else None"] if table.keeps_results else []),
        "    index = first_index - 1",
        "    for event in events:",
        "        index += 1",
        f"        if event.{table.partial_attribute}:",
        "            not_replayed.append(index)",
        "            continue",
        *_condition(["index <= terminal_index", *(f"event.{name} is UNSET" for name in unset)], "        "),
        "            content = event.content",
        "            cls = type(content)",
    ]
    for number, read in enumerate(table.tool_contents.values()):
        lines.append(f"            {'if' if number == 0 else 'elif'} cls is class{number}:")
        lines += _branch(number, read.call_id, read.tool_name, read.arguments, read.error_flag, read.opens, hidden is not None, _kept(table))
    lines += [
        f"            {'elif' if kinds else 'if'} cls in LOOP_SKIPPED:",
        "                continue",
        "        walk._next_index = next_index  # anything else: the generic loop, for this event alone",
        "        walk_one(walk, event, index)",
        "        next_index = walk._next_index",
        "        terminal_index = walk.terminal_index",
        "    walk._next_index = next_index",
    ]
    return kinds, "\n".join(lines)


def _kept(table: ProjectorTable) -> str | None:
    """What the loop keeps of a result for a later action event's check (`OpenOperation.response_event`), as an
    expression, or None (no check reads one): the event where it holds a field the checks read (all of them:
    `result_fields` None), else NO_FIELDS_READ (none to read, nothing of the chunk kept alive)."""
    if not table.keeps_results:
        return None
    if table.result_fields is None:
        return "event"
    held = " or ".join(f"event.{attribute} is not UNSET" for attribute, _ in table.result_fields)
    return f"event if {held} else NO_FIELDS_READ"


def _condition(tests: list[str], indent: str) -> list[str]:
    """`if a and b ...:` on one line, or one test a line where that would pass 120 columns."""
    flat = f"{indent}if {' and '.join(tests)}:"
    if len(flat) <= 120:
        return [flat]
    return [f"{indent}if (", *(f"{indent}    {test}{' and' if number < len(tests) - 1 else ''}" for number, test in enumerate(tests)), f"{indent}):"]


def _branch(
    number: int, call_id: str, tool_name: str | None, arguments: str | None, error_flag: str | None, opens: bool, hides: bool, kept: str | None
) -> list[str]:
    """The statements for one tool content class; each common case ends in `continue` (`hides`: the contract hides
    rows, and a result of a hidden call is the generic loop's; `kept`: what is kept of a result a check of an action
    event may read (`_kept`), noted, with a store, to be let go of with its chunk)."""
    failed = f"content.{error_flag} is True" if error_flag is not None else "False"
    name = f"content.{tool_name}" if tool_name is not None else "None"
    if opens:
        lines = [
            f"    call_id = content.{call_id}",
            f"    target, anomaly = OPEN{number}_FAILED if {failed} else OPEN{number}" if error_flag is not None else f"    target, anomaly = OPEN{number}",
            "    if anomaly is None and find_operation(call_id) is None:",
            f"        args = content.{arguments}" if arguments is not None else "        args = None",
            "        if copy_arguments and type(args) is Raw:",
            "            args = args.copy()  # not a view into the chunk it was decoded from",
            f"        operations[call_id] = OpenOperation(target, {name} or '', args, index, event.id, next_index)",
            "        next_index += 1",
            "        if opened is not None:",
            "            opened(call_id_hash(call_id))",
            "        continue",
        ]
    else:
        lines = [
            f"    operation = find_operation(content.{call_id})",
            f"    if operation is not None{'' if tool_name is None else f' and operation.tool_name == {name}'}"
            f"{' and not operation.call_hidden' if hides else ''}:",
            f"        failed = {failed}",
            f"        target, anomaly = (STEPS{number}_FAILED if failed else STEPS{number}).get(operation.state, NO_STEP)"
            if error_flag is not None
            else f"        target, anomaly = STEPS{number}.get(operation.state, NO_STEP)",
            "        if anomaly is None:",
            "            operation.state = target",
            "            if target in storable:",
            f"                settled.append(content.{call_id})",
            *(["            elif answered_now is not None:", "                answered_now(operation)  # (its result let go of with the chunk)"] if kept else []),
            "            if operation.response_index >= 0:",
            "                not_replayed.append(operation.response_index)  # superseded: only the settling result pairs",
            "            operation.response_index = index",
            "            operation.response_event_id = event.id",
            *([f"            operation.response_event = {kept}"] if kept else []),
            "            operation.response_is_error = failed",
            *(["            operation.response_hidden = False"] if hides else []),
            "            continue",
        ]
    return ["            " + line for line in lines]
