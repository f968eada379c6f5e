/**
 * `scienceevolve init`: a small working workflow folder to start from — one service with one tool, Main
 * using it, the chosen harness with the environment variables it reads named. `pack` and `run` accept it
 * as it is written.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SdkError } from '../errors.js';
import { makeDirs } from '../fileModes.js';
import { jsonFileText, LAUNCH_FILE, SERVICES_DIR, WORKFLOW_YAML, workflowYamlText } from './folderLayout.js';
import { prepareEmpty } from './unpackFolder.js';
import { workflowJsonSchemaText } from './workflowJsonSchema.js';
import type { Harness } from './workflowSchema.js';
import { INIT_HARNESSES } from '../schemas/harnessNames.js';

export { INIT_HARNESSES };
/** One of {@link INIT_HARNESSES}. */
export type InitHarness = (typeof INIT_HARNESSES)[number];

/** The harness each choice writes, and the host variables it reads (named in the README). */
const HARNESSES: Record<InitHarness, { harness: Harness | Record<string, unknown>; env: string[]; note: string }> = {
  scripted: {
    harness: { type: 'scripted' },
    env: [],
    note: 'Main follows script.json (no model): `--script script.json` on `run`. Change `harness` for a model.',
  },
  openai: {
    harness: { type: 'openai', model: 'gpt-4.1', apiKeyEnv: 'OPENAI_API_KEY' },
    env: ['OPENAI_API_KEY'],
    note: 'Any OpenAI-compatible server works: add `baseUrl` (e.g. http://127.0.0.1:11434/v1 for Ollama).',
  },
  anthropic: {
    harness: { type: 'anthropic', model: 'claude-sonnet-4-5', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    env: ['ANTHROPIC_API_KEY'],
    note: 'The Anthropic Messages API.',
  },
  gemini: {
    harness: { type: 'gemini', model: 'gemini-2.5-flash', apiKeyEnv: 'GEMINI_API_KEY' },
    env: ['GEMINI_API_KEY'],
    note: 'The Gemini API.',
  },
  claude: {
    harness: { type: 'command', preset: 'claude', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    env: ['ANTHROPIC_API_KEY'],
    note: 'Claude Code (`claude` on PATH). Remove `apiKeyEnv` to use its own login instead.',
  },
  codex: {
    harness: { type: 'command', preset: 'codex', apiKeyEnv: 'OPENAI_API_KEY' },
    env: ['OPENAI_API_KEY'],
    note: 'Codex CLI (`codex` on PATH). Remove `apiKeyEnv` to use its own login instead.',
  },
  'gemini-cli': {
    harness: { type: 'command', preset: 'gemini', apiKeyEnv: 'GEMINI_API_KEY' },
    env: ['GEMINI_API_KEY'],
    note: 'Gemini CLI (`gemini` on PATH).',
  },
  opencode: {
    harness: {
      type: 'command',
      preset: 'opencode',
      model: 'anthropic/claude-sonnet-4-5',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
    },
    env: ['ANTHROPIC_API_KEY'],
    note: 'OpenCode (`opencode` on PATH); `model` is `provider/model` as OpenCode names it.',
  },
  pi: {
    harness: { type: 'command', preset: 'pi', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    env: ['ANTHROPIC_API_KEY'],
    note: 'pi (`pi` on PATH, with pi-mcp-adapter beside it).',
  },
  command: {
    harness: { type: 'command', command: 'my-agent', args: ['--mcp-config', '{mcpConfig}', '{prompt}'], envFrom: {} },
    env: [],
    note: 'Your own agent CLI: set `command` and `args` (`{prompt}`, `{workspace}` and `{mcpConfig}` are filled in) and map the variables it needs in `envFrom`.',
  },
};

/** Options of {@link initFolder}. @internal */
export interface InitFolderOptions {
  /** The folder to write; created when absent, refused (`folder_not_empty`) when it holds anything. */
  dir: string;
  /** The harness of Main. Default `scripted`. */
  harness?: InitHarness;
}

/** What {@link initFolder} wrote. @internal */
export interface InitFolderResult {
  dir: string;
  harness: InitHarness;
  /** Every file written, relative to `dir`. */
  files: string[];
  /** The host variables the harness reads (set them before `run`). */
  env: string[];
}

/** The service's one tool: counts the words of a text. */
const SERVER_CJS = `// text-tools: one MCP tool, count_words. Edit it as a normal file, then \`scienceevolve workflow pack\`.
// The SDK gives every service its own copy of @modelcontextprotocol/sdk and zod (through NODE_PATH).
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'text-tools', version: '1.0.0' });
server.registerTool(
  'count_words',
  {
    description: 'Count the words of a text',
    inputSchema: {
      text: z.string(),
      after: z.string().optional().describe('count only what follows the first occurrence of this marker, e.g. ":"'),
    },
  },
  async ({ text, after }) => {
    const at = after === undefined || after === '' ? -1 : text.indexOf(after);
    const counted = at === -1 ? text : text.slice(at + after.length);
    const words = counted.split(/\\s+/).filter((w) => w !== '').length;
    return { content: [{ type: 'text', text: \`\${words} words\` }] };
  },
);
// The SDK closes stdin to stop a service: leave then.
process.stdin.on('end', () => setTimeout(() => process.exit(0), 500).unref());
server.connect(new StdioServerTransport());
`;

/**
 * Writes a small working workflow folder at `options.dir`: `workflow.yaml`, `services/text-tools/`
 * (`service.json`, `server.cjs`), `workflow.schema.json` (for editors), `README.md`, and `script.json` for
 * the scripted harness. Throws `folder_not_empty`, `io_error`, or `usage` for an unknown harness.
 * @internal
 */
export async function initFolder(options: InitFolderOptions): Promise<InitFolderResult> {
  const harness = options.harness ?? 'scripted';
  if (!(INIT_HARNESSES as readonly string[]).includes(harness)) {
    throw new SdkError('usage', `unknown harness "${harness}"`, {
      remedy: `choose one of ${INIT_HARNESSES.join(', ')}`,
      data: { harness },
    });
  }
  const choice = HARNESSES[harness];
  const workflow = {
    $schema: './workflow.schema.json',
    orchestration: { allowMainReconfiguration: false },
    agents: {
      main: {
        harness: choice.harness,
        instructions:
          'Count the words of the text in the requirement with the text-tools service, and answer with the count.',
        mcpServers: [{ name: 'text-tools', project: 'text-tools' }],
      },
    },
  };
  const files = new Map<string, string>();
  files.set(WORKFLOW_YAML, workflowYamlText(workflow));
  files.set(`${SERVICES_DIR}/text-tools/${LAUNCH_FILE}`, jsonFileText({ entrypoint: 'server.cjs', command: 'node' }));
  files.set(`${SERVICES_DIR}/text-tools/server.cjs`, SERVER_CJS);
  files.set('workflow.schema.json', workflowJsonSchemaText());
  if (harness === 'scripted') {
    files.set(
      'script.json',
      jsonFileText({
        agents: {
          main: [
            // {{task}} is the requirement given to `run`; the text to count follows its first ":".
            { call: 'text-tools__count_words', arguments: { text: '{{task}}', after: ':' } },
            { final: 'The text has {{0}}.' },
          ],
        },
      }),
    );
  }
  files.set('README.md', readme(harness, choice));
  await prepareEmpty(options.dir);
  try {
    for (const [path, text] of files) {
      makeDirs(dirname(join(options.dir, path)));
      await writeFile(join(options.dir, path), text, { flag: 'wx' });
    }
  } catch (error) {
    throw new SdkError('io_error', `could not write ${options.dir}: ${(error as Error).message}`, {
      remedy: 'check that the folder is writable',
      data: { dir: options.dir },
      cause: error,
    });
  }
  return { dir: options.dir, harness, files: [...files.keys()], env: choice.env };
}

function readme(harness: InitHarness, choice: { env: string[]; note: string }): string {
  const env =
    choice.env.length === 0
      ? ''
      : `\nSet ${choice.env.map((e) => `\`${e}\``).join(', ')} in your environment first (the workflow names the variable, never the key).\n`;
  const script = harness === 'scripted' ? ' --script script.json' : '';
  return `# A ScienceEvolve workflow (harness: ${harness})

- \`workflow.yaml\` — the agents and orchestration. ${choice.note}
- \`services/text-tools/\` — one MCP service: \`server.cjs\` is its code, \`service.json\` how it starts.
  Every file in the folder is a file of the service.
- \`workflow.schema.json\` — the JSON Schema for editors (\`scienceevolve schema --out workflow.schema.json\` refreshes it).
${env}
\`\`\`sh
scienceevolve workflow pack . --out workflow.json     # check it and build workflow.json
export SCIENCEEVOLVE_DATA_DIR=~/.scienceevolve/data   # where runs and versions are kept (--data-dir wins)
mkdir -p /tmp/ws
scienceevolve services probe --workflow . --workspace /tmp/ws --agent main
scienceevolve run --workflow . --workspace /tmp/ws${script} "How many words: the quick brown fox"
scienceevolve status
\`\`\`

See the getting-started guide of ScienceEvolve (docs/getting-started.md) for the whole path.
`;
}
