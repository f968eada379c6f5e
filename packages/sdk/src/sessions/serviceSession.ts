/**
 * The one face every live service has towards the layers above it (invocation, bridge), whether it is a
 * project service (a supervised stdio process group) or a remote Streamable HTTP service. The bridge
 * builds an agent's surface from a list of these; it never sees processes or transports.
 */
import type { CallCancel } from './callCancel.js';
import type { CallHold, QuestionOptions } from './elicitation.js';
import type { AcceptedTask, TaskFollowOptions } from './tasks.js';
import type {
  CallToolResult,
  GetPromptResult,
  Implementation,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import type { SdkError } from '../errors.js';
import type { CatalogChange, ServiceEventListener, ServiceState } from './serviceEvents.js';

/** Everything a service offered when it was listed at start (every page of every list). */
export interface ServiceCatalog {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplateType[];
  prompts: Prompt[];
  /** What the server said about itself in `initialize`. */
  serverInfo?: Implementation;
  capabilities?: ServerCapabilities;
  /** The protocol version negotiated. */
  protocolVersion?: string;
  /**
   * The list methods the server declares (by its capabilities) but answered with "method not found"
   * (-32601), e.g. `['resources/templates/list']`: each counts as an empty list. Empty or absent: none.
   */
  missingLists?: string[];
  /**
   * What a 2026-07-28 server said of each list's freshness (`ttlMs`, `cacheScope` of the list's first
   * page): the session lists again when the shortest `ttlMs` has passed. Absent for 2025-era servers.
   */
  freshness?: Partial<Record<'tools' | 'resources' | 'resourceTemplates' | 'prompts', ListFreshness>>;
}

/** A list result's freshness hints (2026-07-28). */
export interface ListFreshness {
  /** Milliseconds the list stays fresh; 0 = stale at once (listed again only on a change announced). */
  ttlMs?: number;
  /** `public` or `private` (the server's word; the SDK shares no list across invocations either way). */
  cacheScope?: string;
}

/** Options of one forwarded request. */
export interface ForwardOptions {
  /** Milliseconds before the request is cancelled at the service and answered `forward_timeout`. Default 60,000. */
  timeoutMs?: number;
  /** Aborts the request (it is cancelled at the service). */
  signal?: AbortSignal;
  /**
   * The same cancellation without an `AbortSignal` (sessions/callCancel.ts): given by the gate, with
   * `signal` a getter of its lazy signal. A session's fast path listens here; anything else reads `signal`.
   */
  cancel?: CallCancel;
  /**
   * Asks the service for progress (a `progressToken`) and is told each `notifications/progress` it sends
   * for this request. Each one starts `timeoutMs` again, up to `maxTotalTimeoutMs` in all.
   */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** With `onProgress`: milliseconds the request may take in all, however much progress it reports. Default 10 × `timeoutMs`. */
  maxTotalTimeoutMs?: number;
  /**
   * For `callTool`: how a call the service answers with an MCP task is followed (sessions/tasks.ts). A
   * task-capable call is always sent task-augmented; `timeoutMs` then bounds each request, not the task.
   */
  task?: TaskFollowOptions;
  /** For `callTool`: who answers a question the service asks during the call (sessions/elicitation.ts). */
  question?: QuestionOptions;
  /** Set by the session while a person answers a question of the call: the forwarding timeout waits. */
  hold?: CallHold;
}

/** Options of starting (or connecting to) one service, whatever its kind. */
export interface SessionStartOptions {
  /**
   * Absolute end of the startup budget in epoch milliseconds (`Date.now()` scale). Default: 35,000 ms from
   * the call, also when a signal is given.
   */
  deadline?: number;
  /** Aborts the start (reported as `startup_timeout`; a `TimeoutError` reason counts as the deadline). */
  signal?: AbortSignal;
  /** Receives every state transition and the service events. */
  onEvent?: ServiceEventListener;
  /**
   * Milliseconds to wait after a `notifications/…/list_changed` before listing the service again (more
   * notifications within it are listed once). Default 50.
   */
  listChangeDebounceMs?: number;
  /** Milliseconds the start waited at the admission gate before this call (reported in `service.ready`). */
  queuedMs?: number;
  /**
   * Milliseconds: the shortest wait before listing a 2026-07-28 service again when its lists' `ttlMs`
   * has passed (a server's `ttlMs` of 5 ms does not make the SDK list 200 times a second). Default 1,000.
   */
  listTtlFloorMs?: number;
}

/** A started, initialized and listed service. */
export interface ServiceSession {
  /** The service name the agent sees (for aliases: the first alias; see `aliases`). */
  readonly name: string;
  /** Every name this one session serves under in the invocation (aliases of one definition share one session). */
  readonly aliases: readonly string[];
  /** `project`: a supervised stdio process group; `remote`: a Streamable HTTP URL. */
  readonly kind: 'project' | 'remote';
  /** The catalog as last listed: at start, and again after each list change the service announced. */
  readonly catalog: ServiceCatalog;
  /**
   * Has `listener` told after each re-listing that changed the catalog (the new catalog is already in
   * place). Returns the function that stops it. Optional: a session without it never changes its catalog.
   */
  onCatalogChanged?(listener: (change: CatalogChange) => void): () => void;
  callTool(name: string, args: Record<string, unknown> | undefined, options?: ForwardOptions): Promise<CallToolResult>;
  readResource(uri: string, options?: ForwardOptions): Promise<ReadResourceResult>;
  getPrompt(name: string, args: Record<string, string> | undefined, options?: ForwardOptions): Promise<GetPromptResult>;
  /**
   * Re-attaches to a task this service accepted earlier (recorded before a host crash) and follows it to
   * its end as {@link callTool} would; never calls the tool again. Optional: a session without tasks.
   */
  resumeTask?(tool: string, task: AcceptedTask, options?: ForwardOptions): Promise<CallToolResult>;
  /** Sends `tasks/cancel` for every task of this session still followed (bounded; never rejects). */
  cancelOpenTasks?(): Promise<void>;
  /** Collects the service (for a project service: stdin end, SIGTERM, grace, SIGKILL, sweep). Idempotent. */
  close(): Promise<void>;
}

/** A live project service: a {@link ServiceSession} with its process facts. */
export interface StdioServiceSession extends ServiceSession {
  readonly kind: 'project';
  /** The leader's pid. */
  readonly pid: number;
  /** The process group id (= `pid`: the leader leads its own group). */
  readonly pgid: number;
  readonly state: ServiceState;
  readonly stderrLogPath: string;
  /** Why the service failed, once it has. */
  readonly failure: SdkError | undefined;
  /** Stdout lines skipped so far because they were not JSON-RPC. */
  readonly pollutedLines: number;
  /** Stdout lines so far that claimed JSON-RPC but were invalid. */
  readonly invalidLines: number;
  /** After close: pids that outlived SIGKILL and the wait (normally empty); the supervisor keeps them. */
  readonly survivors: readonly number[];
  /** The last lines of stderr (for diagnostics; never published as events). */
  stderrTail(): string[];
}

/** A connected and listed remote service. */
export interface RemoteServiceSession extends ServiceSession {
  readonly kind: 'remote';
  readonly state: ServiceState;
  /** The endpoint without credentials or query string. */
  readonly url: string;
}
