/**
 * A surface call's cancellation without an `AbortSignal` (sessions/callCancel.ts), for the faces: a
 * face hands one to `callTool` with {@link withCancel}; the dispatch and the gate take it from there.
 */
export { type Abortable, CallCancel, withCancel } from '../sessions/callCancel.js';
