/**
 * The local model server speaks each wire protocol as its real clients expect: plain `fetch` requests,
 * the SSE streams parsed by hand, tool calls and usage checked, follow-up requests with tool results
 * normalized, and each fault in the provider's error shape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ModelServerOptions, scriptedPolicy, startModelServer } from '../../fixtures/modelServer/index.js';
import { readSse } from '../../fixtures/modelServer/readSse.js';

const TOOLS_CHAT = [
  { type: 'function', function: { name: 'mcp__lab__echo', description: 'Echo text', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'mcp__lab__add', description: 'Add', parameters: { type: 'object' } } },
];

async function server(t: import('node:test').TestContext, options: ModelServerOptions = {}) {
  const s = await startModelServer(options);
  t.after(() => s.close());
  return s;
}

/** A JSON body, loosely typed: the tests check provider JSON field by field. */
// biome-ignore lint/suspicious/noExplicitAny: provider JSON is checked field by field below
async function json(res: Response): Promise<any> {
  return res.json();
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const echoThenAdd = () =>
  scriptedPolicy([
    { call: 'echo', arguments: { text: 'hi' } },
    {
      calls: [
        { call: 'add', arguments: { a: 1, b: 2 } },
        { call: 'echo', arguments: { text: 'again' } },
      ],
    },
  ]);

// ---------------------------------------------------------------- OpenAI Chat Completions

test('chat completions, not streaming: a tool call with its JSON arguments and usage', async (t) => {
  const s = await server(t, {
    respond: scriptedPolicy([{ call: 'echo', arguments: { text: 'hi' } }], {
      usage: { inputTokens: 11, outputTokens: 7 },
    }),
  });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hi' },
    ],
    tools: TOOLS_CHAT,
  });
  assert.equal(res.status, 200);
  const body = await json(res);
  assert.equal(body.object, 'chat.completion');
  const choice = body.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.role, 'assistant');
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  assert.equal(call.type, 'function');
  assert.match(call.id, /^call_/);
  assert.equal(call.function.name, 'mcp__lab__echo');
  assert.deepEqual(JSON.parse(call.function.arguments), { text: 'hi' });
  assert.deepEqual(
    { p: body.usage.prompt_tokens, c: body.usage.completion_tokens, t: body.usage.total_tokens },
    { p: 11, c: 7, t: 18 },
  );
  const [request] = s.requests;
  assert.equal(request?.protocol, 'openai-chat');
  assert.equal(request?.path, '/v1/chat/completions');
  assert.equal(request?.stream, false);
  assert.equal(request?.system, 'Be brief.');
  assert.deepEqual(request?.messages, [{ role: 'user', text: 'Say hi' }]);
  assert.deepEqual(
    request?.tools.map((tool) => tool.name),
    ['mcp__lab__echo', 'mcp__lab__add'],
  );
});

test('chat completions, streaming: tool call fragments by index, finish reason, usage chunk and [DONE]', async (t) => {
  const s = await server(t, {
    respond: () => ({
      toolCalls: [
        { name: 'mcp__lab__add', arguments: { a: 1, b: 2 } },
        { name: 'mcp__lab__echo', arguments: { text: 'parallel' } },
      ],
      usage: { inputTokens: 20, outputTokens: 5 },
    }),
  });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }],
    tools: TOOLS_CHAT,
  });
  const events = await readSse(res);
  assert.equal(events.at(-1)?.data, '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const calls: Array<{ id: string; name: string; args: string }> = [];
  let finish: string | undefined;
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      if (choice.finish_reason) finish = choice.finish_reason;
      for (const fragment of choice.delta.tool_calls ?? []) {
        if (fragment.id) calls[fragment.index] = { id: fragment.id, name: fragment.function.name, args: '' };
        const call = calls[fragment.index];
        assert.ok(call, 'a fragment arrives after the first fragment of its call');
        call.args += fragment.function.arguments ?? '';
      }
    }
  }
  assert.equal(finish, 'tool_calls');
  assert.deepEqual(
    calls.map((c) => [c.name, JSON.parse(c.args)]),
    [
      ['mcp__lab__add', { a: 1, b: 2 }],
      ['mcp__lab__echo', { text: 'parallel' }],
    ],
  );
  assert.ok(calls.every((c) => c.id.startsWith('call_')));
  assert.ok(
    chunks.some((c) => c.choices[0]?.delta.tool_calls?.some((f: { id?: string }) => f.id === undefined)),
    'arguments arrive in more than one fragment',
  );
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.deepEqual([usage.usage.prompt_tokens, usage.usage.completion_tokens], [20, 5]);
  assert.equal(s.requests[0]?.stream, true);
  assert.equal(s.requests[0]?.streamUsage, true);
});

test('chat completions, streaming without include_usage: text deltas and no usage chunk', async (t) => {
  const s = await server(t, { respond: () => ({ text: 'all done here' }) });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    stream: true,
    messages: [{ role: 'user', content: 'Go' }],
  });
  const events = await readSse(res);
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'all done here');
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  assert.ok(chunks.every((c) => c.usage === undefined && c.choices.length === 1));
});

test('chat completions: a follow-up with tool results is normalized and gets the final text', async (t) => {
  const s = await server(t, { respond: echoThenAdd() });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    messages: [
      { role: 'developer', content: 'Use tools.' },
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'mcp__lab__echo', arguments: '{"text":"hi"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'hi' },
      {
        role: 'assistant',
        content: 'two at once',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'mcp__lab__add', arguments: '{"a":1,"b":2}' } },
          { id: 'call_3', type: 'function', function: { name: 'mcp__lab__echo', arguments: '{"text":"again"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: '{"content":[{"type":"text","text":"3"}]}' },
      { role: 'tool', tool_call_id: 'call_3', content: [{ type: 'text', text: 'again' }] },
    ],
    tools: TOOLS_CHAT,
  });
  const body = await json(res);
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.equal(body.choices[0].message.content, 'final: hi | 3 | again');
  assert.deepEqual(s.requests[0]?.messages, [
    { role: 'user', text: 'Go' },
    { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'mcp__lab__echo', arguments: { text: 'hi' } }] },
    { role: 'tool', toolResults: [{ id: 'call_1', name: 'mcp__lab__echo', text: 'hi' }] },
    {
      role: 'assistant',
      text: 'two at once',
      toolCalls: [
        { id: 'call_2', name: 'mcp__lab__add', arguments: { a: 1, b: 2 } },
        { id: 'call_3', name: 'mcp__lab__echo', arguments: { text: 'again' } },
      ],
    },
    {
      role: 'tool',
      toolResults: [
        { id: 'call_2', name: 'mcp__lab__add', text: '{"content":[{"type":"text","text":"3"}]}' },
        { id: 'call_3', name: 'mcp__lab__echo', text: 'again' },
      ],
    },
  ]);
  assert.equal(s.requests[0]?.system, 'Use tools.');
});

// ---------------------------------------------------------------- Anthropic Messages

const TOOLS_ANTHROPIC = [
  { name: 'mcp__lab__echo', description: 'Echo text', input_schema: { type: 'object' } },
  { name: 'mcp__lab__add', description: 'Add', input_schema: { type: 'object' } },
];

test('anthropic messages, streaming: the real event sequence, tool_use input from input_json_delta, usage', async (t) => {
  const s = await server(t, {
    respond: () => ({
      text: 'Calling.',
      toolCalls: [{ name: 'mcp__lab__echo', arguments: { text: 'hi there' } }],
      usage: { inputTokens: 30, outputTokens: 9 },
    }),
  });
  const res = await post(
    `${s.url}/v1/messages?beta=true`,
    {
      model: 'claude-test',
      max_tokens: 1024,
      stream: true,
      system: [{ type: 'text', text: 'You are Claude Code.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }],
      tools: TOOLS_ANTHROPIC,
    },
    { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
  );
  const events = await readSse(res);
  const data = events.map((e) => JSON.parse(e.data));
  for (const [i, e] of events.entries()) assert.equal(e.event, data[i].type, 'event: names the data type');
  const sequence = data.map((d) => (d.type === 'content_block_delta' ? `delta:${d.delta.type}` : d.type));
  assert.deepEqual(
    sequence.filter((x, i) => x !== sequence[i - 1]),
    [
      'message_start',
      'ping',
      'content_block_start',
      'delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  assert.equal(data[0].message.role, 'assistant');
  assert.equal(data[0].message.usage.input_tokens, 30);
  const blocks: Array<{ type: string; text?: string; id?: string; name?: string; json?: string }> = [];
  for (const d of data) {
    if (d.type === 'content_block_start') blocks[d.index] = { ...d.content_block, json: '' };
    if (d.type === 'content_block_delta') {
      const block = blocks[d.index]!;
      if (d.delta.type === 'text_delta') block.text = (block.text ?? '') + d.delta.text;
      else block.json += d.delta.partial_json;
    }
  }
  assert.equal(blocks[0]?.text, 'Calling.');
  assert.equal(blocks[1]?.type, 'tool_use');
  assert.equal(blocks[1]?.name, 'mcp__lab__echo');
  assert.match(blocks[1]?.id ?? '', /^toolu_/);
  assert.deepEqual(JSON.parse(blocks[1]?.json ?? ''), { text: 'hi there' });
  const delta = data.find((d) => d.type === 'message_delta');
  assert.equal(delta.delta.stop_reason, 'tool_use');
  assert.equal(delta.usage.output_tokens, 9);
  const [request] = s.requests;
  assert.equal(request?.protocol, 'anthropic');
  assert.equal(request?.path, '/v1/messages');
  assert.equal(request?.query.beta, 'true');
  assert.equal(request?.system, 'You are Claude Code.');
  assert.equal(request?.apiKey, 'sk-ant-test');
  assert.equal(request?.headers['x-api-key'], 'sk-ant-test');
});

test('anthropic messages, not streaming: a follow-up with tool_result blocks, final text, end_turn', async (t) => {
  const s = await server(t, { respond: scriptedPolicy([{ call: 'echo', arguments: { text: 'hi' } }]) });
  const res = await post(`${s.url}/v1/messages`, {
    model: 'claude-test',
    max_tokens: 100,
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Echoing.' },
          { type: 'tool_use', id: 'toolu_1', name: 'mcp__lab__echo', input: { text: 'hi' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'hi' }], is_error: true },
          { type: 'text', text: '<system-reminder>keep going</system-reminder>' },
        ],
      },
    ],
    tools: TOOLS_ANTHROPIC,
  });
  const body = await json(res);
  assert.equal(body.type, 'message');
  assert.equal(body.stop_reason, 'end_turn');
  assert.deepEqual(body.content, [{ type: 'text', text: 'final: hi' }]);
  assert.equal(typeof body.usage.input_tokens, 'number');
  assert.deepEqual(s.requests[0]?.messages, [
    { role: 'user', text: 'Go' },
    {
      role: 'assistant',
      text: 'Echoing.',
      toolCalls: [{ id: 'toolu_1', name: 'mcp__lab__echo', arguments: { text: 'hi' } }],
    },
    { role: 'tool', toolResults: [{ id: 'toolu_1', name: 'mcp__lab__echo', text: 'hi', isError: true }] },
    { role: 'user', text: '<system-reminder>keep going</system-reminder>' },
  ]);
});
