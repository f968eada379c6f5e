/**
 * The fixed catalog `scienceevolve` (SPEC §9, §10.1): the SDK's own tools on Main's surface.
 * `get_workflow` always; `apply_workflow` only when `orchestration.allowMainReconfiguration` is true;
 * `delegate` when the engine runs Main. Workers never get the catalog.
 */
import { telemetry } from '../events/telemetry.js';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { LocalService, LocalTool } from '../surface/surface.js';
import { SdkError, isSdkError, toSdkError } from '../errors.js';
import { applyWorkflow } from '../reconfigure/applyWorkflow.js';
import { readWorkflowView } from '../reconfigure/workflowView.js';
import type { ProjectPaths } from '../store/projectStore.js';
import type { InvocationRecord } from './runRecord.js';

/** The fixed catalog's service name. */
export const FIXED_CATALOG_SERVICE = 'scienceevolve';

/** What the fixed catalog needs. */
export interface FixedCatalogOptions {
  paths: ProjectPaths;
  /** Whether `apply_workflow` is offered (the accepted workflow's `allowMainReconfiguration`). */
  allowReconfiguration: boolean;
  /** Told of every successful apply (the engine publishes `workflow.reconfigured`). */
  onReconfigured?: (result: { version: number; changedMcps: string[]; changedAgents: string[] }) => void;
  /** The `delegate` tool, when the engine runs Main. */
  delegate?: LocalTool;
}

const GET_DESCRIPTION = `Returns the accepted workflow and its version: {"version", "workflow"}. Start from it when proposing changes with apply_workflow.
By default each mcpDefinitions entry is a summary without file contents:
{"digest", "entrypoint", "command", "args", "envFrom", "fileBytes": {"<path>": <size in bytes>}}.
In apply_workflow, keep such a service by reference: "<name>": {"accepted": "<its digest>"}.
Call with {"sources": true} only when you need to read services' code: every definition then comes with its full "files" (large).`;

const APPLY_DESCRIPTION = `Propose a new workflow: services (MCP servers) for yourself and the workers.
Send the COMPLETE workflow snapshot as {"workflow": {...}}: start from get_workflow's "workflow" and change it.
Rules:
- Keep each accepted service by reference, never by restating its files: "mcpDefinitions": {"<name>": {"accepted": "<digest from get_workflow>"}}.
  Sending a definition back exactly as get_workflow showed it (with its "digest") keeps it too; a changed "digest" is refused.
- To add a service, add a full entry under a NEW name (files: path -> full file text, entrypoint: the file to run;
  command defaults to "node", so a CommonJS server can require('@modelcontextprotocol/sdk/server/mcp.js') and 'zod'),
  then give an agent a reference: agents.<agent>.mcpServers += {"name": "<name>", "project": "<definition>"}.
- Accepted definitions cannot be changed, replaced or removed: to change one, add it under a NEW name and move the references.
- Omitting "mcpDefinitions" keeps the accepted table; supplying it states the full table (references and new entries).
- Leave "orchestration" and every agent's "harness" exactly as get_workflow returned them.
- A new agent has no "harness" (it gets orchestration.defaultHarness); without a defaultHarness, agents cannot be added.
- A new service's "envFrom" may read only the host variables in orchestration.mainMayMapEnv.
- A remote service {"name", "url"} must match orchestration.allowedRemoteUrls.
- Keep every "tools" filter as returned, or narrower; a new entry for a filtered service carries that filter too.
- Nothing is started now: new services start at the affected agents' next invocation.
On success: {"version", "changedMcps", "changedAgents"}. On a bad snapshot: isError with every error's code and path; fix them and call again.
Example: accepted "tools" kept by reference, a new "stats" service for the analyst:
{"workflow": {"orchestration": {...as returned...},
  "agents": {"main": {...as returned...}, "analyst": {...as returned, with "mcpServers": [{"name": "stats", "project": "stats"}]}},
  "mcpDefinitions": {"tools": {"accepted": "<digest of tools>"},
    "stats": {"entrypoint": "server.cjs", "files": {"server.cjs": "const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js'); ..."}}}}}`;

/** The catalog as an in-process service for the bridge's surface. */
export function fixedCatalog(options: FixedCatalogOptions): LocalService {
  const tools: LocalTool[] = [
    {
      tool: {
        name: 'get_workflow',
        title: 'Get the workflow',
        description: GET_DESCRIPTION,
        inputSchema: {
          type: 'object',
          properties: {
            sources: {
              type: 'boolean',
              description: "true: every definition's full files; false (default): digests, launch settings, file sizes",
            },
          },
          additionalProperties: false,
        },
        annotations: { readOnlyHint: true },
      },
      handler: async (args) => {
        const view = await readWorkflowView(options.paths, { sources: args.sources === true });
        return jsonResult({ version: view.version, workflow: view.workflow });
      },
    },
  ];
  if (options.allowReconfiguration) {
    tools.push({
      tool: {
        name: 'apply_workflow',
        title: 'Apply a new workflow',
        description: APPLY_DESCRIPTION,
        inputSchema: {
          type: 'object',
          properties: {
            workflow: {
              type: 'object',
              description:
                'the complete workflow snapshot; accepted definitions as {"accepted": "<digest>"}, new ones in full',
            },
          },
          required: ['workflow'],
          additionalProperties: false,
        },
        annotations: { destructiveHint: false, idempotentHint: true },
      },
      handler: async (args) => {
        try {
          const result = await applyWorkflow(options.paths, args.workflow, { by: 'main' });
          options.onReconfigured?.(result);
          return jsonResult({
            ...result,
            note:
              result.changedMcps.length + result.changedAgents.length === 0
                ? 'nothing changed'
                : "accepted; new services start at the affected agents' next invocation",
          });
        } catch (error) {
          return errorResult(error);
        }
      },
    });
  }
  if (options.delegate) tools.push(options.delegate);
  return { name: FIXED_CATALOG_SERVICE, tools: tools.map(traced) };
}

/** `local` with each call in a `tools/call` span when export is on (a worker's invocation is under `delegate`'s). */
function traced(local: LocalTool): LocalTool {
  return {
    tool: local.tool,
    handler: async (args, extra) => {
      const spans = telemetry();
      if (spans === undefined) return local.handler(args, extra);
      const facts = {
        method: 'tools/call',
        target: local.tool.name,
        service: FIXED_CATALOG_SERVICE,
        kind: 'fixed',
      } as const;
      return spans.inCall({ ...facts, arguments: args }, async () => local.handler(args, extra));
    },
  };
}

/** A tool result carrying `value` as structured content and as the JSON text of its one text item. */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A tool error naming every validation error's code and path, so a model can correct itself. */
export function errorResult(error: unknown): CallToolResult {
  const e = isSdkError(error) ? toSdkError(error) : toSdkError(error);
  const errors = (e.data.errors as Array<{ code: string; path: string; message: string }> | undefined) ?? [];
  const text =
    errors.length > 0
      ? `${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was applied:\n${errors.map((x) => `- ${x.code} at ${x.path}: ${x.message}`).join('\n')}`
      : `${e.code}: ${e.message}${e.remedy ? ` (${e.remedy})` : ''}`;
  return {
    isError: true,
    content: [{ type: 'text', text }],
    structuredContent: { code: e.code, message: e.message, errors },
  };
}

/** What Main's `delegate` needs from the engine. */
export interface DelegateOptions {
  /** The worker agents of the workflow version in force (every agent but `main`). */
  workers(): Promise<string[]>;
  /** Runs one invocation of worker `agent` on `task` to its end (retries included) and returns its record. */
  run(agent: string, task: string): Promise<InvocationRecord>;
}

/**
 * Main's `delegate` (SPEC §10.1): one worker invocation to its end; its final answer is the result. A
 * worker that fails (or is cancelled) is a tool error naming its invocation, status and error, so Main
 * can go on.
 */
export function delegateTool(options: DelegateOptions): LocalTool {
  return {
    tool: {
      name: 'delegate',
      title: 'Delegate a task to a worker',
      description:
        'Runs one worker agent on a task and returns its final answer. The worker works with its own services; Main cannot be delegated to.',
      inputSchema: {
        type: 'object',
        properties: {
          agent: { type: 'string', description: 'the worker agent (a name under "agents", not "main")' },
          task: { type: 'string', description: 'what the worker should do' },
        },
        required: ['agent', 'task'],
        additionalProperties: false,
      },
    },
    handler: async (args: Record<string, unknown>) => {
      const agent = String(args.agent);
      const task = String(args.task);
      const workers = await options.workers();
      if (!workers.includes(agent)) {
        return errorResult(
          new SdkError(
            'unknown_agent',
            agent === 'main' ? 'Main cannot delegate to itself' : `there is no worker "${agent}"`,
            { remedy: `delegate to one of: ${workers.join(', ') || '(no workers)'}`, data: { agent } },
          ),
        );
      }
      const worker = await options.run(agent, task);
      if (worker.state !== 'succeeded') {
        const error = worker.error ?? {
          code: 'cancelled',
          message: `the run was cancelled before worker "${agent}" finished`,
        };
        return {
          isError: true,
          content: [
            {
              type: 'text',
              text: `worker "${agent}" (invocation ${worker.id}) ${worker.state} after ${worker.attempts.length} attempt(s): ${error.code}: ${error.message}`,
            },
          ],
          structuredContent: { agent, invocation: worker.id, status: worker.state, error },
        };
      }
      return {
        content: [{ type: 'text', text: worker.output ?? '' }],
        structuredContent: { agent, invocation: worker.id, status: worker.state, output: worker.output ?? '' },
      };
    },
  };
}
