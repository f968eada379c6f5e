/**
 * What the host journaled of an invocation's steps, read back from the run's journal for a harness to check
 * its checkpoint against (SPEC §10.3): the digest of every model response (`model.called`) and every
 * completed tool call that carried a call id (`tool.called`, and the calls a provider library answered
 * itself). The journal's lines are not typed on read (the run's folder is the user's, see `readEvents`), so
 * each field used is checked here; a line of another shape adds nothing.
 */
import type { JournaledSteps } from '../harness/harness.js';

/** {@link JournaledSteps} as plain JSON (a queue job carries it to the worker). */
export interface JournaledStepsJson {
  responses: string[];
  calls: { callId: string; tool: string; resultDigest: string }[];
}

/** The steps journaled for `invocation` among `events` (a run's journal, in order). */
export function journaledSteps(events: readonly unknown[], invocation: string): JournaledSteps {
  const json: JournaledStepsJson = { responses: [], calls: [] };
  for (const event of events) {
    if (typeof event !== 'object' || event === null) continue;
    const e = event as Record<string, unknown>;
    if (e.invocation !== invocation) continue;
    if (e.type === 'model.called') {
      if (typeof e.responseDigest === 'string') json.responses.push(e.responseDigest);
      if (Array.isArray(e.answered)) for (const call of e.answered) addCall(json, call);
    } else if (e.type === 'tool.called') {
      addCall(json, { callId: e.callId, tool: e.tool, resultDigest: e.resultDigest });
    }
  }
  return fromJournaledJson(json);
}

/** The plain JSON of `steps`. */
export function journaledJson(steps: JournaledSteps): JournaledStepsJson {
  return {
    responses: [...steps.responses],
    calls: [...steps.calls].flatMap(([callId, entries]) => entries.map((entry) => ({ callId, ...entry }))),
  };
}

/** The steps a {@link JournaledStepsJson} holds; entries of another shape are left out. */
export function fromJournaledJson(json: JournaledStepsJson): JournaledSteps {
  const calls = new Map<string, { tool: string; resultDigest: string }[]>();
  for (const call of json.calls) {
    if (!isCall(call)) continue;
    const entries = calls.get(call.callId) ?? [];
    entries.push({ tool: call.tool, resultDigest: call.resultDigest });
    calls.set(call.callId, entries);
  }
  return { responses: new Set(json.responses.filter((d) => typeof d === 'string')), calls };
}

/** Whether `value` has the shape of {@link JournaledStepsJson} (a queue job's field, checked on receipt). */
export function isJournaledJson(value: unknown): value is JournaledStepsJson {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Array.isArray(v.responses) &&
    v.responses.every((d) => typeof d === 'string') &&
    Array.isArray(v.calls) &&
    v.calls.every(isCall)
  );
}

function addCall(json: JournaledStepsJson, call: unknown): void {
  if (isCall(call)) json.calls.push({ callId: call.callId, tool: call.tool, resultDigest: call.resultDigest });
}

function isCall(value: unknown): value is JournaledStepsJson['calls'][number] {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.callId === 'string' && typeof v.tool === 'string' && typeof v.resultDigest === 'string';
}
