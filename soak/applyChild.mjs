// The child the apply part kills: applies workflows to one project in a loop (argv: data dir, project,
// first index), each with definitions whose files differ, until it is SIGKILLed. Prints each accepted
// version. Plain JavaScript, so each of the many children starts without a TypeScript loader.
import { applyWorkflow } from '../packages/sdk/dist/reconfigure/applyWorkflow.js';
import { openProject } from '../packages/sdk/dist/internal.js';

const [dataDir, project, first] = process.argv.slice(2);
const paths = await openProject(dataDir, project);
for (let i = Number(first); ; i++) {
  const defs = {};
  const servers = [];
  for (let d = 0; d < 3; d++) {
    const files = { 'server.cjs': `// version ${i} definition ${d}\nprocess.stdin.resume();\n` };
    for (let f = 0; f < 20; f++) files[`data/f${f}.txt`] = `${i}:${d}:${f}:`.repeat(200 + ((i * 7 + f) % 50));
    defs[`def-${d}`] = { entrypoint: 'server.cjs', files };
    servers.push({ name: `svc-${d}`, project: `def-${d}` });
  }
  const result = await applyWorkflow(
    paths,
    {
      orchestration: { allowMainReconfiguration: true },
      agents: { main: { mcpServers: servers } },
      mcpDefinitions: defs,
    },
    { by: 'operator' },
  );
  process.stdout.write(`${result.version}\n`);
}
