/** diffWorkflows: the one function `workflow load` and `apply_workflow` use to say what changed. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Workflow, parseWorkflow } from '../../../packages/sdk/src/index.js';
import { diffWorkflows } from '../../../packages/sdk/src/internal.js';
import { type Doc, definition } from '../../fixtures/workflows/documents.js';

function base(): Doc {
  return {
    agents: {
      main: { instructions: 'lead', mcpServers: [{ name: 'tools', project: 'tools' }] },
      analyst: {
        mcpServers: [
          { name: 'files', project: 'tools' },
          { name: 'search', project: 'search' },
        ],
      },
      writer: { mcpServers: [{ name: 'materials', url: 'http://127.0.0.1:8000/mcp' }] },
    },
    mcpDefinitions: {
      tools: definition({ 'server.cjs': 'tools' }),
      search: definition({ 'server.cjs': 'search' }),
    },
  };
}

function workflow(change: (d: Doc) => void = () => {}): Workflow {
  const doc = base();
  change(doc);
  return parseWorkflow(doc);
}

const cases: Array<{
  title: string;
  change: (d: Doc) => void;
  changedMcps: string[];
  changedAgents: string[];
  orchestrationChanged?: boolean;
}> = [
  {
    title: 'a definition changed: it, and every agent using it (also through an alias)',
    change: (d) => (d.mcpDefinitions.tools.files['server.cjs'] = 'tools v2'),
    changedMcps: ['tools'],
    changedAgents: ['analyst', 'main'],
  },
  {
    title: 'a definition changed only in its args',
    change: (d) => (d.mcpDefinitions.search.args = ['--fast']),
    changedMcps: ['search'],
    changedAgents: ['analyst'],
  },
  {
    title: 'a definition added but used by nobody',
    change: (d) => (d.mcpDefinitions.spare = definition({ 'server.cjs': 'spare' })),
    changedMcps: ['spare'],
    changedAgents: [],
  },
  {
    title: 'a definition and an agent named like Object.prototype members (constructor) added',
    change: (d) => {
      d.mcpDefinitions.constructor = definition({ 'server.cjs': 'ctor' });
      d.agents.constructor = { mcpServers: [{ name: 'c', project: 'constructor' }] };
    },
    changedMcps: ['constructor'],
    changedAgents: ['constructor'],
  },
  {
    title: 'a definition removed with the entry that used it',
    change: (d) => {
      delete d.mcpDefinitions.search;
      d.agents.analyst.mcpServers.pop();
    },
    changedMcps: ['search'],
    changedAgents: ['analyst'],
  },
  {
    title: 'a definition renamed (same digest, new name): both names changed',
    change: (d) => {
      d.mcpDefinitions.finder = d.mcpDefinitions.search;
      delete d.mcpDefinitions.search;
      d.agents.analyst.mcpServers[1].project = 'finder';
    },
    changedMcps: ['finder', 'search'],
    changedAgents: ['analyst'],
  },
  {
    title: 'instructions of one agent',
    change: (d) => (d.agents.main.instructions = 'lead, carefully'),
    changedMcps: [],
    changedAgents: ['main'],
  },
  {
    title: 'a harness',
    change: (d) => (d.agents.writer.harness = { type: 'openai', model: 'm' }),
    changedMcps: [],
    changedAgents: ['writer'],
  },
  {
    title: 'a remote entry',
    change: (d) => (d.agents.writer.mcpServers[0].url = 'http://127.0.0.1:8001/mcp'),
    changedMcps: [],
    changedAgents: ['writer'],
  },
  {
    title: 'a service renamed in one agent',
    change: (d) => (d.agents.main.mcpServers[0].name = 'toolbox'),
    changedMcps: [],
    changedAgents: ['main'],
  },
  {
    title: 'an agent added and one removed',
    change: (d) => {
      d.agents.reviewer = {};
      delete d.agents.writer;
    },
    changedMcps: [],
    changedAgents: ['reviewer', 'writer'],
  },
  {
    title: 'orchestration only',
    change: (d) => (d.orchestration = { allowMainReconfiguration: true }),
    changedMcps: [],
    changedAgents: [],
    orchestrationChanged: true,
  },
];

describe('diffWorkflows', () => {
  test('nothing accepted yet: everything is new', () => {
    const diff = diffWorkflows(undefined, workflow());
    assert.deepEqual(diff, {
      changedMcps: ['search', 'tools'],
      changedAgents: ['analyst', 'main', 'writer'],
      orchestrationChanged: true,
      changed: true,
    });
  });

  test('the same workflow: nothing changed', () => {
    assert.deepEqual(diffWorkflows(workflow(), workflow()), {
      changedMcps: [],
      changedAgents: [],
      orchestrationChanged: false,
      changed: false,
    });
  });

  test('the same workflow written differently (defaults spelled out, keys reordered): nothing changed', () => {
    const spelled = workflow((d) => {
      d.orchestration = { allowedRemoteUrls: [], invocationRetries: 1, git: false, allowMainReconfiguration: false };
      d.agents = Object.fromEntries(Object.entries(d.agents).reverse());
      d.agents.writer = { mcpServers: d.agents.writer.mcpServers, instructions: '', harness: { type: 'scripted' } };
    });
    assert.equal(diffWorkflows(workflow(), spelled).changed, false);
  });

  for (const c of cases) {
    test(c.title, () => {
      const diff = diffWorkflows(workflow(), workflow(c.change));
      assert.deepEqual(diff, {
        changedMcps: c.changedMcps,
        changedAgents: c.changedAgents,
        orchestrationChanged: c.orchestrationChanged ?? false,
        changed: true,
      });
      // Symmetric in what it names.
      const back = diffWorkflows(workflow(c.change), workflow());
      assert.deepEqual(back.changedMcps, c.changedMcps);
    });
  }
});
