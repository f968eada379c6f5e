/**
 * `scienceevolve workflow load|show|history|diff|verify`: the operator's view of a project's accepted
 * workflow. Every read checks the store's hash chain (`store_tampered` on an edit made outside the SDK);
 * `verify` checks a whole project.
 */
import { SdkError } from '@scienceevolve/sdk/errors';
import {
  ProjectPaths,
  loadWorkflow,
  openDataDir,
  readVersion,
  readTextFile,
  readVersions,
  requireAccepted,
  resolveProjectId,
  verifyProjects,
} from '@scienceevolve/sdk/store';
import { diffWorkflows, packFolder, unpackWorkflow } from '@scienceevolve/sdk/workflow';
import { writeFile } from 'node:fs/promises';
import { parseCommand, positiveInt, RANGES, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export async function workflowCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'load') return load(rest, io);
  if (sub === 'show') return show(rest, io);
  if (sub === 'history') return history(rest, io);
  if (sub === 'diff') return diff(rest, io);
  if (sub === 'pack') return pack(rest, io);
  if (sub === 'unpack') return unpack(rest, io);
  if (sub === 'verify') return verify(rest, io);
  throw usageError(
    sub === undefined ? 'workflow needs a subcommand' : `unknown subcommand "workflow ${sub}"`,
    'use `workflow load`, `show`, `history`, `diff`, `verify`, `pack` or `unpack`',
  );
}

async function pack(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow pack'), argv);
  const [dir] = positionals;
  if (dir === undefined || positionals.length > 1) {
    throw usageError(
      'workflow pack takes one workflow folder',
      'scienceevolve workflow pack my-flow --out workflow.json',
    );
  }
  const packed = await packFolder(dir);
  const services = Object.keys(packed.document.mcpDefinitions ?? {});
  if (values.out === undefined) {
    // The workflow itself is the one JSON document on stdout, with or without --json.
    io.stdout(packed.text);
    return EXIT.ok;
  }
  try {
    await writeFile(values.out, packed.text);
  } catch (error) {
    throw new SdkError('io_error', `could not write ${values.out}: ${(error as Error).message}`, {
      remedy: 'check that the folder of --out exists and is writable',
      data: { out: values.out },
      cause: error,
    });
  }
  const bytes = Buffer.byteLength(packed.text);
  if (values.json) printJson(io, { out: values.out, services, files: packed.files, bytes });
  else io.stdout(`wrote ${values.out} (${bytes} bytes; services: ${services.join(', ') || '(none)'})\n`);
  return EXIT.ok;
}

async function unpack(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow unpack'), argv);
  if (positionals.length !== 2) {
    throw usageError(
      'workflow unpack takes a workflow file and a folder',
      'scienceevolve workflow unpack workflow.json my-flow',
    );
  }
  const [file, dir] = positionals as [string, string];
  const text = await readTextFile(file, 'workflow file');
  const result = await unpackWorkflow(text, dir);
  if (values.json) printJson(io, { dir: result.dir, files: result.files });
  else io.stdout(`wrote ${result.files.length} files to ${result.dir}\n`);
  return EXIT.ok;
}

async function load(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow load'), argv);
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
  const { values, positionals } = parseCommand(command('workflow show'), argv);
  if (positionals.length > 0) throw usageError('workflow show takes no positional arguments');
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const project = resolveProjectId({ project: values.project, workspace: values.workspace });
  const version = values.version;
  // Reading must not create the project: a mistyped --project would otherwise leave an empty project behind.
  const paths = new ProjectPaths(await openDataDir(dataDir), project);
  const record = version === undefined ? await requireAccepted(paths) : await readVersion(paths, version);
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

/** The paths of an existing project, without creating anything. */
async function existingProject(values: {
  'data-dir'?: string;
  project?: string;
  workspace?: string;
}): Promise<ProjectPaths> {
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const project = resolveProjectId({ project: values.project, workspace: values.workspace });
  const paths = new ProjectPaths(await openDataDir(dataDir), project);
  await requireAccepted(paths);
  return paths;
}

async function history(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow history'), argv);
  if (positionals.length > 0) throw usageError('workflow history takes no positional arguments');
  const paths = await existingProject(values);
  const versions = [];
  // The whole chain read once and checked link by link.
  for (const v of await readVersions(paths)) {
    versions.push({
      version: v.version,
      acceptedAt: v.acceptedAt,
      by: v.by,
      changedMcps: v.changedMcps,
      changedAgents: v.changedAgents,
    });
  }
  if (values.json) printJson(io, { project: paths.projectId, versions });
  else {
    io.stdout(`project ${paths.projectId}\n`);
    for (const v of versions) {
      io.stdout(
        `  ${v.version}  ${v.acceptedAt}  by ${v.by.padEnd(8)}  services: ${v.changedMcps.join(', ') || '-'}; agents: ${v.changedAgents.join(', ') || '-'}\n`,
      );
    }
  }
  return EXIT.ok;
}

async function diff(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow diff'), argv);
  if (positionals.length !== 2)
    throw usageError(
      'workflow diff takes two version numbers',
      'scienceevolve workflow diff 1 2 --data-dir D --project P',
    );
  const [a, b] = positionals.map((p, i) => positiveInt(p, i === 0 ? 'version A' : 'version B', RANGES.version)!) as [
    number,
    number,
  ];
  const paths = await existingProject(values);
  const [before, after] = [await readVersion(paths, a), await readVersion(paths, b)];
  const d = diffWorkflows(before.workflow, after.workflow);
  const result = {
    project: paths.projectId,
    from: a,
    to: b,
    changedMcps: d.changedMcps,
    changedAgents: d.changedAgents,
    orchestrationChanged: d.orchestrationChanged,
    digests: Object.fromEntries(
      d.changedMcps.map((name) => [name, { from: digestOf(before.digests, name), to: digestOf(after.digests, name) }]),
    ),
  };
  if (values.json) printJson(io, result);
  else {
    io.stdout(`project ${paths.projectId}: version ${a} -> ${b}\n`);
    for (const name of d.changedMcps) {
      const x = { from: digestOf(before.digests, name), to: digestOf(after.digests, name) };
      io.stdout(
        `  service ${name}: ${x.from === null ? 'added' : x.to === null ? 'removed' : 'changed'} (${x.from?.slice(0, 12) ?? '-'} -> ${x.to?.slice(0, 12) ?? '-'})\n`,
      );
    }
    io.stdout(`  agents: ${d.changedAgents.join(', ') || '(none)'}\n`);
    if (d.orchestrationChanged) io.stdout('  orchestration changed\n');
  }
  return EXIT.ok;
}

/** A version's digest of definition `name`, or null when the version has no such definition (own keys only). */
function digestOf(digests: Readonly<Record<string, string>>, name: string): string | null {
  return Object.hasOwn(digests, name) ? (digests[name] ?? null) : null;
}

async function verify(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('workflow verify'), argv);
  if (positionals.length > 0) throw usageError('workflow verify takes no positional arguments');
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const report = await verifyProjects({ dataDir, project: values.project });
  if (values.json) printJson(io, report);
  else {
    if (report.projects.length === 0) io.stdout(`no projects in ${report.dataDir}\n`);
    for (const p of report.projects) {
      const checked = `accepted version ${p.acceptedVersion ?? '(none)'}; ${p.versions} version file${p.versions === 1 ? '' : 's'} and ${p.sources} source${p.sources === 1 ? '' : 's'} checked`;
      io.stdout(
        p.ok
          ? `project ${p.project}: ok (${checked})\n`
          : `project ${p.project}: ${p.problems.length} problem${p.problems.length === 1 ? '' : 's'} (${checked})\n`,
      );
      for (const problem of p.problems) io.stdout(`  ${problem.code}: ${problem.message}\n`);
      for (const note of p.notes) io.stdout(`  note: ${note}\n`);
    }
  }
  return report.ok ? EXIT.ok : EXIT.failed;
}
