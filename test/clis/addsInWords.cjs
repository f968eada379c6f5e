// The project service of the CLI tests: `add {a, b}` answers "2 + 40 = 42". A sentence, not a bare number:
// Gemini CLI 0.61 parses a text result that is JSON as structured content and fails the call when it is
// not an object (see docs/harnesses.md, "gemini").
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'adds', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: 'text', text: `${a} + ${b} = ${a + b}` }] }),
);
process.stdin.on('end', () => setTimeout(() => process.exit(0), 200).unref());
server.connect(new StdioServerTransport());
