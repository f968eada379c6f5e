/**
 * The one place an invocation's state changes (see `InvocationState` for the life): the record is
 * updated and the transition journaled as an `invocation.state` event, so every change is in the journal.
 */
import type { InvocationState, RunEventInput } from '../events/runEvents.js';
import type { InvocationRecord } from './runRecord.js';

/** Moves `invocation` to `to` and journals the change; a move to the state it is in does nothing. */
export function setInvocationState(
  invocation: InvocationRecord,
  to: InvocationState,
  emit: (event: RunEventInput) => void,
): void {
  const from = invocation.state;
  if (from === to) return;
  invocation.state = to;
  emit({
    type: 'invocation.state',
    invocation: invocation.id,
    agent: invocation.agent,
    from,
    to,
    attempt: invocation.attempts.length,
  });
}
