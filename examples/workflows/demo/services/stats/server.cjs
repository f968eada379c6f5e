// stats: summary statistics of a list of numbers.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'stats', version: '1.0.0' });
server.registerTool(
  'summarize',
  { description: 'Count, mean, min and max of numbers', inputSchema: { numbers: z.array(z.number()).min(1) } },
  async ({ numbers }) => {
    const mean = numbers.reduce((a, b) => a + b, 0) / numbers.length;
    const summary = `n=${numbers.length} mean=${mean.toFixed(2)} min=${Math.min(...numbers)} max=${Math.max(...numbers)}`;
    return { content: [{ type: 'text', text: summary }] };
  },
);
process.stdin.on('end', () => setTimeout(() => process.exit(0), 500).unref());
server.connect(new StdioServerTransport());
