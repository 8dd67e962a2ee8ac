"""The rollouts contract, written from its prose: every function call needs its output before the session resumes; a
second call with one id, or an output for no open call, is corrupt."""


def decide(rows):
    calls = {}
    for row in rows:
        payload = row.get("payload")
        if row["type"] != "response_item" or not isinstance(payload, dict):
            continue
        if payload.get("type") == "function_call":
            if payload.get("call_id") in calls:
                return {"corrupt": True}
            calls[payload.get("call_id")] = "open"
        elif payload.get("type") == "function_call_output":
            if calls.get(payload.get("call_id")) != "open":
                return {"corrupt": True}
            calls[payload.get("call_id")] = "answered"
    reasons = ["unanswered"] if "open" in calls.values() else []
    return {"decision": "stop" if reasons else "resume", "reasons": reasons}
