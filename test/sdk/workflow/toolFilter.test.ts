/**
 * Per-assignment tool filters (`mcpServers[].tools`, SPEC §3.2): a table of bad inputs with the code,
 * path and fix each must give; the glob rules; the filter as part of the assignment (the diff shows it,
 * aliases with different filters still share one process in the plan).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { globMatches, toolPasses } from '../../../packages/sdk/src/surface/toolFilter.js';
import { planServices, toolFiltersOf } from '../../../packages/sdk/src/invocation/plan.js';
import { parseWorkflow } from '../../../packages/sdk/src/index.js';
import { diffWorkflows, LIMITS, validateWorkflow } from '../../../packages/sdk/src/internal.js';
import type { WorkflowVersion } from '../../../packages/sdk/src/store/workflowVersions.js';
import { changed, type Doc } from '../../fixtures/workflows/documents.js';

const ENTRY0 = '$.agents.main.mcpServers[0]';

function withTools(tools: unknown): Doc {
  return changed((d) => {
    d.agents.main.mcpServers[0].tools = tools;
  });
}

const bad: Array<{ title: string; doc: Doc; errors: Array<[path: string, fix: RegExp, code?: string]> }> = [
  {
    title: 'include and exclude at once',
    doc: withTools({ include: ['a'], exclude: ['b'] }),
    errors: [[`${ENTRY0}.tools`, /never both: keep "include" .* or "exclude"/]],
  },
  {
    title: 'an empty include',
    doc: withTools({ include: [] }),
    errors: [[`${ENTRY0}.tools.include`, /empty include offers no tool.*remove "tools"/]],
  },
  {
    title: 'neither include nor exclude',
    doc: withTools({}),
    errors: [[`${ENTRY0}.tools`, /give "include" .* or "exclude"/]],
  },
  {
    title: 'a pattern that is a number',
    doc: withTools({ include: ['search', 7] }),
    errors: [
      [`${ENTRY0}.tools.include[1]`, /expected string, not a number: write each tool name or pattern as a string/],
    ],
  },
  {
    title: 'a pattern that is null, in exclude',
    doc: withTools({ exclude: [null] }),
    errors: [[`${ENTRY0}.tools.exclude[0]`, /not null: write each tool name or pattern as a string/]],
  },
  {
    title: 'a pattern that is an object',
    doc: withTools({ include: [{ name: 'search' }] }),
    errors: [[`${ENTRY0}.tools.include[0]`, /not object: write each tool name/]],
  },
  {
    title: 'an empty pattern',
    doc: withTools({ exclude: [''] }),
    errors: [[`${ENTRY0}.tools.exclude[0]`, /empty pattern matches no tool/]],
  },
  {
    title: 'a pattern over the length limit',
    doc: withTools({ include: ['x'.repeat(LIMITS.toolPatternChars + 1)] }),
    errors: [
      [`${ENTRY0}.tools.include[0]`, new RegExp(`at most ${LIMITS.toolPatternChars} characters`), 'limit_exceeded'],
    ],
  },
  {
    title: 'too many patterns',
    doc: withTools({ exclude: Array.from({ length: LIMITS.toolPatterns + 1 }, (_, i) => `t${i}`) }),
    errors: [[`${ENTRY0}.tools.exclude`, new RegExp(`at most ${LIMITS.toolPatterns} patterns`), 'limit_exceeded']],
  },
  {
    title: 'include given as a string, not a list',
    doc: withTools({ include: 'search' }),
    errors: [[`${ENTRY0}.tools.include`, /expected array, not a string: write a list of tool names or globs/]],
  },
  {
    title: 'tools given as a list',
    doc: withTools(['search']),
    errors: [[`${ENTRY0}.tools`, /expected object, not an array: write \{"include"/]],
  },
  {
    title: 'an unknown key beside include',
    doc: withTools({ include: ['a'], only: ['b'] }),
    errors: [[`${ENTRY0}.tools.only`, /unknown key "only".*\(allowed: include or exclude\)/]],
  },
  {
    title: 'every problem of two entries reported together',
    doc: changed((d) => {
      d.agents.main.mcpServers = [
        { name: 'a', project: 'tools', tools: { include: [] } },
        { name: 'b', url: 'http://127.0.0.1:9/mcp', tools: { include: ['x'], exclude: [3] } },
      ];
    }),
    errors: [
      ['$.agents.main.mcpServers[0].tools.include', /empty include/],
      ['$.agents.main.mcpServers[1].tools', /never both/],
      ['$.agents.main.mcpServers[1].tools.exclude[0]', /as a string/],
    ],
  },
];

describe('tools filter validation', () => {
  for (const c of bad) {
    test(c.title, () => {
      const result = validateWorkflow(c.doc);
      assert.equal(result.ok, false);
      const got = result.errors.map((e) => [e.code, e.path]);
      assert.deepEqual(
        got,
        c.errors.map(([path, , code]) => [code ?? 'invalid_workflow', path]).sort((a, b) => (a[1]! < b[1]! ? -1 : 1)),
        JSON.stringify(result.errors, null, 2),
      );
      for (const [path, fix] of c.errors) {
        const issue = result.errors.find((e) => e.path === path)!;
        assert.match(issue.message, fix);
      }
    });
  }

  test('include, exclude (also empty) and globs are accepted, on project and remote entries', () => {
    for (const tools of [{ include: ['search', 'fetch_*'] }, { exclude: ['*'] }, { exclude: [] }]) {
      const result = validateWorkflow(
        changed((d) => {
          d.agents.main.mcpServers = [
            { name: 'tools', project: 'tools', tools },
            { name: 'far', url: 'http://127.0.0.1:9/mcp', tools },
          ];
        }),
      );
      assert.deepEqual(result.errors, []);
      assert.equal(result.ok, true);
      if (result.ok) assert.deepEqual(result.workflow.agents.main!.mcpServers[0]!.tools, tools);
    }
  });
});

describe('glob matching over the service own names', () => {
  const cases: Array<[pattern: string, name: string, matches: boolean]> = [
    ['search', 'search', true],
    ['search', 'search2', false],
    ['search', 'Search', false],
    ['*', '', true],
    ['*', 'anything at all', true],
    ['fetch_*', 'fetch_', true],
    ['fetch_*', 'fetch_url', true],
    ['fetch_*', 'prefetch_url', false],
    ['*_admin', 'drop_admin', true],
    ['*_admin', 'drop_admins', false],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyy', false],
    ['a*a*a*a*a*a*a*b', `${'a'.repeat(5000)}`, false],
    ['get.item', 'getXitem', false],
    ['get?item', 'getXitem', false],
    ['[ab]', 'a', false],
    ['[ab]', '[ab]', true],
  ];
  for (const [pattern, name, matches] of cases) {
    test(`${JSON.stringify(pattern)} ${matches ? 'matches' : 'does not match'} ${JSON.stringify(name.slice(0, 20))}`, () => {
      assert.equal(globMatches(pattern, name), matches);
    });
  }

  test('include passes what any pattern matches; exclude passes what none matches; no filter passes all', () => {
    assert.equal(toolPasses('fetch_url', { include: ['search', 'fetch_*'] }), true);
    assert.equal(toolPasses('delete', { include: ['search', 'fetch_*'] }), false);
    assert.equal(toolPasses('delete', { exclude: ['delete', 'drop_*'] }), false);
    assert.equal(toolPasses('read', { exclude: ['delete', 'drop_*'] }), true);
    assert.equal(toolPasses('read', { exclude: [] }), true);
    assert.equal(toolPasses('read', undefined), true);
  });
});

describe('the filter is part of the assignment', () => {
  const doc = (mainTools?: unknown, aliasTools?: unknown): Doc =>
    changed((d) => {
      d.agents.main.mcpServers = [
        { name: 'reader', project: 'tools', ...(mainTools === undefined ? {} : { tools: mainTools }) },
        { name: 'writer', project: 'tools', ...(aliasTools === undefined ? {} : { tools: aliasTools }) },
        { name: 'far', url: 'http://127.0.0.1:9/mcp', tools: { exclude: ['drop'] } },
      ];
    });

  test('a changed filter changes the agent, not the definition', () => {
    const before = parseWorkflow(doc({ include: ['read_*'] }));
    const after = parseWorkflow(doc({ include: ['read_*', 'list'] }));
    const diff = diffWorkflows(before, after);
    assert.deepEqual(diff.changedMcps, []);
    assert.deepEqual(diff.changedAgents, ['main']);
    const removed = diffWorkflows(before, parseWorkflow(doc()));
    assert.deepEqual(removed.changedAgents, ['main']);
    assert.equal(diffWorkflows(before, parseWorkflow(doc({ include: ['read_*'] }))).changed, false);
  });

  test('aliases of one definition with different filters share one process; each keeps its filter', () => {
    const workflow = parseWorkflow(doc({ include: ['read_*'] }, { exclude: ['read_*'] }));
    const version = { version: 1, workflow, digests: {} } as unknown as WorkflowVersion;
    const plan = planServices(version, 'main');
    assert.equal(plan.length, 2);
    const project = plan[0]!;
    assert.equal(project.kind, 'project');
    assert.deepEqual(project.aliases, ['reader', 'writer']);
    assert.deepEqual(
      [...toolFiltersOf(plan)],
      [
        ['reader', { include: ['read_*'] }],
        ['writer', { exclude: ['read_*'] }],
        ['far', { exclude: ['drop'] }],
      ],
    );
    // An alias without a filter has no entry: it offers every tool.
    const unfiltered = planServices(
      { version: 1, workflow: parseWorkflow(doc({ include: ['read_*'] })), digests: {} } as unknown as WorkflowVersion,
      'main',
    );
    assert.deepEqual([...toolFiltersOf(unfiltered).keys()], ['reader', 'far']);
  });
});
