/**
 * Every list of states, statuses and reasons that crosses a boundary, each written once as a `z.enum`: the
 * run record, the journal, the CLI's `--json` documents and the TypeScript types all take it from here.
 * The comment on each member says what it means; the transitions are in the comment of the enum.
 */
import * as z from 'zod';
import { HARNESS_PRESETS, INIT_HARNESSES } from './harnessNames.js';

/**
 * The life of a run. `running → succeeded | failed`; `running → cancelled` when its host was asked to stop
 * (SIGINT/SIGTERM, an aborted signal); a `running` run whose host died is shown as `interrupted`.
 * `interrupted → running` and `cancelled → running` by `resume`.
 *
 * - `running`: a host is taking the requirement through Main.
 * - `succeeded`: Main finished and returned its answer. Final.
 * - `failed`: Main's invocation failed after its retries (or the run could not continue). Final.
 * - `cancelled`: the host was cancelled before Main finished; `resume` continues it.
 * - `interrupted`: the host stopped or died before Main finished; `resume` continues it.
 */
export const RunStatusSchema = z.enum(['running', 'succeeded', 'failed', 'cancelled', 'interrupted']);
/** The life of a run (see `RunStatusSchema` for each status). */
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** The statuses a finished `run` or `resume` reports (a run is never `running` once its call returned). */
export const RunEndSchema = RunStatusSchema.exclude(['running']);

/**
 * The life of an invocation: `starting → running → succeeded`; a failed attempt goes back to `starting`
 * while retries remain, else to `failed`; `interrupted` when its host stopped, was cancelled or died
 * mid-way; `resume` takes an interrupted invocation back to `starting` and continues it from its
 * checkpoint. Every transition is journaled as an `invocation.state` event.
 *
 * - `starting`: its services are being started (the harness has not started).
 * - `running`: every service is ready and the harness is running.
 * - `succeeded`: the harness returned its final answer. Final.
 * - `failed`: every attempt failed. Final.
 * - `interrupted`: its host stopped before it finished; `resume` continues it.
 */
export const InvocationStateSchema = z.enum(['starting', 'running', 'succeeded', 'failed', 'interrupted']);
/** The life of an invocation (see `InvocationStateSchema` for each state). */
export type InvocationState = z.infer<typeof InvocationStateSchema>;

/** How one attempt of an invocation ended (null in the record while it runs). */
export const AttemptEndSchema = InvocationStateSchema.extract(['succeeded', 'failed', 'interrupted']);

/** Who accepted a workflow version: the operator (`workflow load`, `run --workflow`) or Main (`apply_workflow`). */
export const AcceptedBySchema = z.enum(['operator', 'main']);
/** Who accepted a version. */
export type AcceptedBy = z.infer<typeof AcceptedBySchema>;

/**
 * Why a service runs sandboxed or not:
 * - `policy_off`: `orchestration.sandbox` is `off`: unsandboxed;
 * - `auto`: `orchestration.sandbox` is `auto` (the default) and a working sandbox is available: sandboxed;
 * - `opted_out`: `auto`, and the operator's definition says `"sandbox": false`: unsandboxed;
 * - `unavailable`: `auto`, but no working sandbox is available: unsandboxed (`detail` says why);
 * - `required`: `orchestration.sandbox` is `required`: sandboxed.
 */
export const SandboxReasonSchema = z.enum(['policy_off', 'auto', 'opted_out', 'unavailable', 'required']);
/** Why a project service runs sandboxed or not (see `SandboxReasonSchema`). */
export type SandboxReason = z.infer<typeof SandboxReasonSchema>;

/**
 * What collects a service's processes on this host: `cgroup-v2` or `cgroup-v1` (a control group per
 * service), or `process-group` (process group and marker sweep).
 */
export const CollectionSchema = z.enum(['cgroup-v2', 'cgroup-v1', 'process-group']);

/** A service's kind: a project service (a stored definition run as a process) or a remote one (a URL). */
export const ServiceKindSchema = z.enum(['project', 'remote']);

/** The lists a service can announce as changed (`notifications/…/list_changed`). */
export const ListNameSchema = z.enum(['tools', 'resources', 'prompts']);

/** Why a prestarted set was collected without serving an invocation. */
export const PrestartCollectedReasonSchema = z.enum([
  'idle',
  'workflow_changed',
  'service_exited',
  'start_failed',
  'run_end',
]);

/** Who answers a service's question during a tool call (an agent's `elicitation`, the `tool.question` event). */
export const ElicitationPolicySchema = z.enum(['model', 'operator', 'decline']);

/** The external agent CLIs the SDK has presets (and `harness-config` formats) for. */
export const HarnessFormatSchema = z.enum(HARNESS_PRESETS);

/** The harness choices of `init` (see `harnessNames.ts`). */
export const InitHarnessSchema = z.enum(INIT_HARNESSES);
