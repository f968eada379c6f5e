#!/usr/bin/env node
// Writes workflow.json and script.json of the demo from services/*.cjs. The script's apply_workflow step
// must carry the complete workflow snapshot (SPEC §9), sources included, so both files are generated
// from the same sources: edit services/ and run `node examples/workflows/demo/build.mjs && npx biome format --write examples/workflows/demo`.
import { readFileSync, writeFileSync } from 'node:fs';

const here = new URL('./', import.meta.url);
const source = (name) => readFileSync(new URL(`services/${name}.cjs`, here), 'utf8');
const definition = (name) => ({
  command: 'node',
  entrypoint: 'server.cjs',
  args: [],
  envFrom: {},
  files: { 'server.cjs': source(name) },
});

const workflow = {
  orchestration: { allowMainReconfiguration: true, git: false, invocationRetries: 1, allowedRemoteUrls: [] },
  agents: {
    main: {
      harness: { type: 'scripted' },
      instructions:
        'Keep the data in the workspace, have the analyst summarize it, give the reporter a chart service, and report.',
      mcpServers: [{ name: 'workspace-tools', project: 'workspace-tools' }],
    },
    analyst: {
      harness: { type: 'scripted' },
      instructions: 'Summarize the numbers you are given with the stats service.',
      mcpServers: [{ name: 'stats', project: 'stats' }],
    },
    reporter: {
      harness: { type: 'scripted' },
      instructions: 'Draw the numbers you are given with the charts service.',
      mcpServers: [],
    },
  },
  mcpDefinitions: { 'workspace-tools': definition('workspace-tools'), stats: definition('stats') },
};

// Main's proposal: a new definition `charts`, assigned to the reporter. Everything else unchanged.
const proposed = structuredClone(workflow);
proposed.mcpDefinitions.charts = definition('charts');
proposed.agents.reporter.mcpServers = [{ name: 'charts', project: 'charts' }];

const numbers = [3, 5, 8, 13];
const script = {
  agents: {
    main: [
      {
        call: 'workspace-tools__write_file',
        arguments: { path: 'data/measurements.txt', content: `${numbers.join(' ')}\n` },
      },
      {
        call: 'scienceevolve__delegate',
        arguments: { agent: 'analyst', task: `Summarize the measurements ${numbers.join(', ')}.` },
      },
      { call: 'scienceevolve__apply_workflow', arguments: { workflow: proposed } },
      {
        call: 'scienceevolve__delegate',
        arguments: { agent: 'reporter', task: `Chart the measurements ${numbers.join(', ')}.` },
      },
      { call: 'workspace-tools__read_file', arguments: { path: 'data/measurements.txt' } },
      {
        final:
          'Measurements: {{4}}Summary (analyst): {{1}}\nChart (reporter, with the charts service Main added):\n{{3}}',
      },
    ],
    analyst: [{ call: 'stats__summarize', arguments: { numbers } }, { final: '{{0}}' }],
    reporter: [{ call: 'charts__bar_chart', arguments: { values: numbers } }, { final: '{{0}}' }],
  },
};

writeFileSync(new URL('workflow.json', here), `${JSON.stringify(workflow, null, 2)}\n`);
writeFileSync(new URL('script.json', here), `${JSON.stringify(script, null, 2)}\n`);
