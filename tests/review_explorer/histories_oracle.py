"""The histories contract, written from its prose: a started activity without its completion or failure holds the
workflow; a start, completion or failure of no scheduled or started activity, or a schedule row twice, is corrupt.
Ids are read as the runtime writes them: strings of digits (a Temporal eventId), read as numbers here."""


def decide(rows):
    activities = {}
    for row in rows:
        event_id = int(row["eventId"])  # (the runtime writes digits: an id it never writes makes this raise)
        kind = row["eventType"]
        if kind == "activity_task_scheduled":
            if event_id in activities:
                return {"corrupt": True}
            activities[event_id] = "scheduled"
        elif kind.startswith("activity_task_"):
            attributes = row.get({"activity_task_started": "activityTaskStartedEventAttributes",
                                  "activity_task_completed": "activityTaskCompletedEventAttributes",
                                  "activity_task_failed": "activityTaskFailedEventAttributes"}[kind])
            if not isinstance(attributes, dict) or not isinstance(attributes.get("scheduledEventId"), str):
                return {"undecided": True}
            scheduled = int(attributes["scheduledEventId"])
            wanted, then = ("scheduled", "started") if kind == "activity_task_started" else ("started", kind.rpartition("_")[2])
            if activities.get(scheduled) != wanted:
                return {"corrupt": True}
            activities[scheduled] = then
    reasons = ["in_doubt"] if "started" in activities.values() else []
    return {"decision": "hold" if reasons else "resume", "reasons": reasons}
