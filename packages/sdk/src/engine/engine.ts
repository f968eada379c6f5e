/**
 * The engine's entry points (SPEC §10), gathered for importers that name this module: starting and
 * resuming runs live in runs.ts, the run loop in runLoop.ts, the journaled surface in toolJournal.ts.
 */
export { resumeRuns, runWorkflow, startRun } from './runs.js';
export type { EngineOptions, ResumeOptions, RunHandle, RunOptions, RunResult } from './runs.js';
export { readEvents } from '../events/journal.js';
export { publicError } from '../events/publicError.js';
export { TOOL_ARGUMENTS_BYTES, TOOL_SUMMARY_BYTES, firstBytes } from './toolJournal.js';
