#!/usr/bin/env node
// Writes workflow.json and script.json of the demo. workflow.json is this folder packed
// (`scienceevolve workflow pack examples/workflows/demo`); script.json is Main's script, whose
// apply_workflow step carries the complete proposed snapshot (SPEC §9): the packed workflow plus the
// service folder proposal/charts, assigned to the reporter. Edit a service file, then run
// `npm run build && node examples/workflows/demo/script.mjs && npx biome format --write examples/workflows/demo`;
// a test checks that both files are current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packFolder, packServiceFolder } from '@scienceevolve/sdk';

const here = fileURLToPath(new URL('./', import.meta.url));

/** The demo's workflow.json text and script.json text, built from the folder. */
export async function demoFiles() {
  const packed = await packFolder(here);
  // Main's proposal: a new definition `charts`, assigned to the reporter. Everything else unchanged.
  const proposed = structuredClone(packed.document);
  proposed.mcpDefinitions.charts = await packServiceFolder(`${here}proposal/charts`);
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
  return { workflow: packed.text, script: `${JSON.stringify(script, null, 2)}\n` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await demoFiles();
  writeFileSync(`${here}workflow.json`, files.workflow);
  writeFileSync(`${here}script.json`, files.script);
}
