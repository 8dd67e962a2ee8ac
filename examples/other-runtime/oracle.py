"""The other runtime's crash contract, written from its prose and not from spec/contract.yaml: `resume-contract
verify` decides every small ledger with the contract and with this, and fails on any ledger they decide apart.

After a crash a prefix is `replayable` when every action has an observation and no interrupt awaits its resume;
`halt` with `action_in_doubt` for an action without an observation; `halt` with `awaiting_input` for a pending
interrupt; an observation or resume for an unknown id, a second observation, a second action or interrupt with
one id, or anything after `finish` is corruption.
"""


def decide(rows):
    actions, interrupts, finished = {}, {}, False
    for row in rows:
        kind = row["kind"]
        if finished:
            return {"corrupt": True}
        if kind == "action":
            if row["action_id"] in actions:
                return {"corrupt": True}
            actions[row["action_id"]] = "in_doubt"
        elif kind == "observation":
            if actions.get(row["action_id"]) != "in_doubt":
                return {"corrupt": True}
            actions[row["action_id"]] = "succeeded" if row["error"] is None else "failed"
        elif kind == "interrupt":
            if row["interrupt_id"] in interrupts:
                return {"corrupt": True}
            interrupts[row["interrupt_id"]] = "waiting"
        elif kind == "resume":
            if interrupts.get(row["interrupt_id"]) != "waiting":
                return {"corrupt": True}
            interrupts[row["interrupt_id"]] = "resumed"
        elif kind == "finish":
            finished = True
    reasons = []
    if "in_doubt" in actions.values():
        reasons.append("action_in_doubt")
    if "waiting" in interrupts.values():
        reasons.append("awaiting_input")
    return {"decision": "halt" if reasons else "replayable", "reasons": reasons}
