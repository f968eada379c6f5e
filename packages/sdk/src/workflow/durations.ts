/**
 * The duration bounds every timer uses, apart from the workflow schema so that the process layer (the
 * supervisor client, process groups, start budgets) loads without zod: `services probe` forks the host's
 * supervisor before the schemas load (docs/decisions/probe-start.md). `workflowSchema.ts` re-exports both.
 */

/** The longest duration an option may name: 2^31 − 1 ms (a longer `setTimeout` fires at once). @internal */
export const MAX_DURATION_MS = 2_147_483_647;

/**
 * `ms` as a timer can wait for it: from 0 to {@link MAX_DURATION_MS}. Node fires a `setTimeout` of more
 * than 2^31 − 1 ms (or of NaN) after 1 ms, so every timer whose delay is computed goes through here.
 */
export function timerMs(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_DURATION_MS);
}
