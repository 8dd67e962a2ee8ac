// What apache/maka's own code says of RuntimeEvents, for tools/node_sqlite_cases.py (bundled with esbuild from a
// tree of maka at f19eede03; see that script). stdin: a JSON list of requests; stdout: a JSON list of answers.
//   {"op": "hash", "toolName", "args"}    -> canonicalToolArgsHash(toolName, args) (packages/core/src/tool-args-identity.ts)
//   {"op": "kind", "event"}               -> the event_kind column maka's SQLite writer derives (runtimeEventKind)
//   {"op": "plan", "events", "options"}   -> buildResumePlanFromRuntimeEvents(events, options) (packages/runtime/src/runtime-resume.ts)
import { canonicalToolArgsHash } from '@maka/core/tool-args-identity';
import { buildResumePlanFromRuntimeEvents } from '@maka/runtime/runtime-resume';
import { readFileSync } from 'node:fs';

// packages/storage/src/sqlite-runtime-store.ts, runtimeEventKind (module-private there), verbatim.
function runtimeEventKind(event: any): string {
  return (
    event.content?.kind ??
    event.status ??
    (event.actions?.workspaceFact ? 'workspace_fact' : undefined) ??
    (event.actions?.toolDispatch ? 'tool_dispatch' : undefined) ??
    (event.actions?.endInvocation ? 'invocation_end' : 'runtime_fact')
  );
}

const answers = JSON.parse(readFileSync(0, 'utf8')).map((request: any) => {
  try {
    if (request.op === 'hash') return { hash: canonicalToolArgsHash(request.toolName, request.args) };
    if (request.op === 'kind') return { kind: runtimeEventKind(request.event) };
    return { plan: buildResumePlanFromRuntimeEvents(request.events, request.options ?? {}) };
  } catch (error: any) {
    return { threw: String(error?.message ?? error) };
  }
});
process.stdout.write(JSON.stringify(answers));
