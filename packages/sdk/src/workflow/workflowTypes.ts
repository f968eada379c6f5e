/**
 * The `workflow.json` model (SPEC §3) as written TypeScript: the public types of a workflow with every
 * default filled (the form the SDK stores and compares). The zod schemas that check a document are in
 * `workflowSchema.ts`, typed by these interfaces and checked against them at compile time, so the two
 * cannot drift (docs/decisions/record-schemas.md). Only types here: importing this module loads nothing.
 */

/**
 * Who answers a question a service asks during a tool call (`elicitation/create`, `input_required`):
 * `model` (a tool error states the question; the model calls again with `answer`), `operator` (an
 * attended run's terminal; unattended, the call fails `question_unanswered`) or `decline`.
 * @public
 */
export type ElicitationPolicy = 'model' | 'operator' | 'decline';

/** One entry of `mcpDefinitions` (SPEC §3.1): a project service's files and how to run them. @public */
export interface McpDefinition {
  /** path → content: the complete set of the service's text files. */
  files: Record<string, string>;
  /** A key of `files` whose content is non-empty: the file to run. */
  entrypoint: string;
  /** `node` (the SDK's own Node executable, the default) or an executable's name or path; never a shell line. */
  command: string;
  /** Arguments after the copied entrypoint's absolute path. */
  args: string[];
  /** Service variable → host variable, read when the service starts. */
  envFrom: Record<string, string>;
  /**
   * `false`: no network inside the sandbox (a sandboxed service only, see `orchestration.sandbox`).
   * Default `true`, left absent when not written (so the digest of a definition written before it existed stays).
   */
  network?: boolean;
  /**
   * `false`: the operator's opt-out of the sandbox under `orchestration.sandbox: "auto"` (the service then
   * runs as the host user). Main can never propose it; `required` ignores it. Absent when not written.
   */
  sandbox?: boolean;
}

/**
 * Which of a service's tools an agent is offered (SPEC §3.2): `include` (only the tools matching a pattern)
 * or `exclude` (every tool but those), never both. A pattern is a tool name or a glob (`*` is any run of
 * characters) over the service's own names.
 * @public
 */
export interface ToolFilter {
  /** Offer only the tools matching one of these patterns; at least one pattern. */
  include?: string[];
  /** Offer every tool except those matching one of these patterns. */
  exclude?: string[];
}

/**
 * A remote entry's OAuth 2.1 settings (SPEC §8); without them a remote that answers 401 is signed in to
 * with `scienceevolve auth login`. Secrets are read from host variables or 0600 files when the service is
 * connected, never stored.
 * @public
 */
export interface RemoteOAuth {
  /** `client_credentials`: unattended sign-in with the pre-registered client's secret or key. */
  grant?: 'authorization_code' | 'client_credentials';
  /** A pre-registered client's id. */
  clientId?: string;
  /** The host variable holding the client secret. */
  clientSecretEnv?: string;
  /** An absolute path of a 0600 file holding the client secret. */
  clientSecretFile?: string;
  /** How the client authenticates; `client_secret_basic` by default. */
  authMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /** `private_key_jwt`: the host variable holding the PEM private key. */
  privateKeyEnv?: string;
  /** `private_key_jwt`: an absolute path of a 0600 file holding the PEM private key. */
  privateKeyFile?: string;
  /** `private_key_jwt`: the signing algorithm; `RS256` by default. */
  algorithm?: 'RS256' | 'RS384' | 'RS512' | 'ES256' | 'ES384' | 'ES512' | 'PS256' | 'EdDSA';
  /** The scope to ask for when the server names none. */
  scope?: string;
  /** An https URL of this client's metadata document, used where the server supports it. */
  clientMetadataUrl?: string;
}

/** One entry of an agent's `mcpServers`: `{ name, project }` or `{ name, url }`, never both. @public */
export interface McpServerEntry {
  /** The name the agent sees. */
  name: string;
  /** A definition of this workflow's `mcpDefinitions`. */
  project?: string;
  /** A remote Streamable HTTP endpoint. */
  url?: string;
  /** Which of the service's tools this agent is offered; every tool when absent. */
  tools?: ToolFilter;
  /**
   * A remote entry's request headers, each value a host variable alone or after one scheme word
   * (`"Bearer ${VAR}"`); read when the service is connected, never stored.
   */
  headers?: Record<string, string>;
  /** A remote entry's OAuth settings (pre-registered client, client credentials). */
  oauth?: RemoteOAuth;
}

/** The options every model-loop harness (`openai`, `anthropic`, `gemini`) takes (SPEC §10.2). @public */
export interface ModelLoopOptions {
  /** The provider's model id. */
  model: string;
  /** The API base URL; the provider's public endpoint when absent. */
  baseUrl?: string;
  /** The host variable that holds the API key (never the key itself). */
  apiKeyEnv?: string;
  /** Model calls (turns) at most before `max_turns_reached`. Default 50. */
  maxTurns: number;
  /** Output tokens per model call at most; the provider's default when absent. */
  maxOutputTokens?: number;
  /** Sampling temperature; the provider's default when absent. */
  temperature?: number;
  /** Milliseconds one model request may take. Default 600,000. */
  requestTimeoutMs: number;
  /** Extra system text, after the agent's instructions. */
  system?: string;
}

/** The `command` harness: an external agent CLI given the invocation's live surface. @public */
export interface CommandHarness {
  /** The harness type. */
  type: 'command';
  /** A known CLI: supplies the command, headless arguments, MCP configuration and unattended settings. */
  preset?: 'claude' | 'codex' | 'gemini' | 'opencode' | 'pi';
  /** The model the CLI should use (in the CLI's own way); its default when absent. */
  model?: string;
  /** The model endpoint the CLI should use; its default when absent. */
  baseUrl?: string;
  /** The host variable that holds the API key the CLI should use. */
  apiKeyEnv?: string;
  /** The executable (name on PATH or path); overrides the preset's. */
  command?: string;
  /** Arguments; overrides the preset's. `{prompt}`, `{workspace}` and `{mcpConfig}` are substituted. */
  args?: string[];
  /** CLI variable → host variable, as for services. */
  envFrom: Record<string, string>;
  /** Milliseconds the CLI may run before it is collected and the attempt fails. Default 3,600,000. */
  timeoutMs: number;
  /** A fresh home and config directory under the invocation's runtime path. Default true. */
  isolateHome: boolean;
}

/**
 * How an agent is run (`agents.<name>.harness`, SPEC §10.2), one configuration per `type`: `scripted`
 * (simulated decisions from the run's script), `openai` (Chat Completions, or the Responses API with
 * `api: "responses"`), `anthropic`, `gemini`, or `command` (an agent CLI).
 * @public
 */
export type Harness =
  | { type: 'scripted' }
  | ({ type: 'openai'; api: 'chat' | 'responses' } & ModelLoopOptions)
  | ({ type: 'anthropic' } & ModelLoopOptions)
  | ({ type: 'gemini' } & ModelLoopOptions)
  | CommandHarness;

/** One agent of a workflow (SPEC §3.2). @public */
export interface WorkflowAgent {
  /** How the agent is run. Default `{ "type": "scripted" }`. */
  harness: Harness;
  /** Standing instructions. */
  instructions: string;
  /** The agent's services, at most 16. */
  mcpServers: McpServerEntry[];
  /** Who answers a service's question during a call; `model` when absent. */
  elicitation?: ElicitationPolicy;
}

/** A workflow's `orchestration` (SPEC §3.3). @public */
export interface WorkflowOrchestration {
  /** Main may call `apply_workflow` only when true. */
  allowMainReconfiguration: boolean;
  /** Git-on: each role works in its own worktree. */
  git: boolean;
  /** How many times a failed invocation is retried with fresh services. Default 1. */
  invocationRetries: number;
  /** URL prefixes a remote entry proposed by Main must match. */
  allowedRemoteUrls: string[];
  /** The harness of an agent Main adds through `apply_workflow`; absent, Main may not add agents. */
  defaultHarness?: Harness;
  /** The host variables a definition Main proposes may read through `envFrom`; none when absent. */
  mainMayMapEnv?: string[];
  /**
   * Where services run sandboxed (bubblewrap): `off` never; `auto` (the default) every project service when
   * a working sandbox is available, except an operator's definition that says `"sandbox": false`;
   * `required` every service, and a start fails when none is available.
   */
  sandbox?: 'off' | 'auto' | 'required';
  /** Milliseconds a tool call answered with an MCP task may run before it is given up; 24 h when absent. */
  taskDeadlineMs?: number;
}

/** A whole workflow, with every default filled: the form the SDK stores and compares. @public */
export interface Workflow {
  /** The JSON Schema editors check the file against (`scienceevolve schema` writes it); it changes nothing. */
  $schema?: string;
  /** How the run is orchestrated. */
  orchestration: WorkflowOrchestration;
  /** The agents by name; `main` is Main. */
  agents: Record<string, WorkflowAgent>;
  /** The project services' definitions by name. */
  mcpDefinitions: Record<string, McpDefinition>;
}
