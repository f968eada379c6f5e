/** `scienceevolve workflow load|show`: the operator's view of a project's accepted workflow. */
import {
  ProjectPaths,
  loadWorkflow,
  openDataDir,
  readAccepted,
  readVersion,
  resolveProjectId,
} from '@scienceevolve/sdk';
import { SdkError } from '@scienceevolve/sdk';
import { parse, positiveInt, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export const WORKFLOW_HELP = [
  'workflow load <workflow.json> --data-dir D (--project P | --workspace W) [--json]',
  '                                     validate, store sources, accept a new version if anything changed',
  'workflow show --data-dir D --project P [--version N] [--json]',
  '                                     print an accepted version',
].join('\n');

const PROJECT_OPTIONS = {
  'data-dir': { type: 'string' },
  project: { type: 'string' },
  workspace: { type: 'string' },
} as const;

export async function workflowCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'load') return load(rest, io);
  if (sub === 'show') return show(rest, io);
  throw usageError(
    sub === undefined ? 'workflow needs a subcommand' : `unknown subcommand "workflow ${sub}"`,
    'use `workflow load` or `workflow show`',
  );
}

async function load(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTIONS, workflow: { type: 'string' } });
  const file = values.workflow ?? positionals[0];
  if (file === undefined || positionals.length > 1) throw usageError('workflow load takes one workflow file');
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  if (values.project === undefined && values.workspace === undefined) {
    throw usageError('workflow load needs --project P or --workspace W');
  }
  const result = await loadWorkflow({ dataDir, project: values.project, workspace: values.workspace, workflow: file });
  if (values.json) {
    printJson(io, {
      project: result.project,
      version: result.version,
      digests: result.digests,
      changedMcps: result.changedMcps,
      changedAgents: result.changedAgents,
    });
  } else {
    io.stdout(
      result.changed
        ? `project ${result.project}: accepted version ${result.version}\n`
        : `project ${result.project}: unchanged, version ${result.version} stays in force\n`,
    );
    for (const [name, digest] of Object.entries(result.digests)) io.stdout(`  ${name}  ${digest}\n`);
    if (result.changed) {
      io.stdout(`  changed services: ${result.changedMcps.join(', ') || '(none)'}\n`);
      io.stdout(`  changed agents: ${result.changedAgents.join(', ') || '(none)'}\n`);
    }
  }
  return EXIT.ok;
}

async function show(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTIONS, version: { type: 'string' } });
  if (positionals.length > 0) throw usageError('workflow show takes no positional arguments');
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const project = resolveProjectId({ project: values.project, workspace: values.workspace });
  // Reading must not create the project: a mistyped --project would otherwise leave an empty project behind.
  const paths = new ProjectPaths(await openDataDir(dataDir), project);
  const version = positiveInt(values.version, '--version');
  const record = version === undefined ? await readAccepted(paths) : await readVersion(paths, version);
  if (record === undefined) {
    throw new SdkError('unknown_project', `project ${project} has no accepted workflow in ${paths.dataDir}`, {
      remedy: 'load one with `scienceevolve workflow load <workflow.json> --data-dir D --project P`',
      data: { project },
    });
  }
  if (values.json) {
    printJson(io, {
      project,
      version: record.version,
      acceptedAt: record.acceptedAt,
      by: record.by,
      digests: record.digests,
      workflow: record.workflow,
    });
  } else {
    io.stdout(`project ${project}, version ${record.version} (accepted ${record.acceptedAt} by ${record.by})\n`);
    io.stdout(`${JSON.stringify(record.workflow, null, 2)}\n`);
  }
  return EXIT.ok;
}
