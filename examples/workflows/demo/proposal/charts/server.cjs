// charts: a text bar chart of labelled values (proposed by Main at run time with apply_workflow).
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'charts', version: '1.0.0' });
server.registerTool(
  'bar_chart',
  { description: 'A text bar chart, one bar per value', inputSchema: { values: z.array(z.number().min(0)).min(1) } },
  async ({ values }) => {
    const lines = values.map((v, i) => `#${i + 1} ${'█'.repeat(Math.round(v))} ${v}`);
    return { content: [{ type: 'text', text: lines.join('\n') }] };
  },
);
process.stdin.on('end', () => setTimeout(() => process.exit(0), 500).unref());
server.connect(new StdioServerTransport());
