// workspace-tools: read and write text files of the agent's workspace (SCIENCEEVOLVE_WORKSPACE, also the cwd).
const fs = require('node:fs');
const path = require('node:path');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const root = fs.realpathSync(process.env.SCIENCEEVOLVE_WORKSPACE || process.cwd());
function inside(relative) {
  const full = path.resolve(root, relative);
  if (full !== root && !full.startsWith(root + path.sep)) throw new Error(`"${relative}" is outside the workspace`);
  return full;
}
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const failure = (e) => ({ isError: true, content: [{ type: 'text', text: String(e.message || e) }] });

const server = new McpServer({ name: 'workspace-tools', version: '1.0.0' });
server.registerTool(
  'write_file',
  { description: 'Write a UTF-8 file of the workspace', inputSchema: { path: z.string(), content: z.string() } },
  async (a) => {
    try {
      fs.mkdirSync(path.dirname(inside(a.path)), { recursive: true });
      fs.writeFileSync(inside(a.path), a.content);
      return text(`wrote ${Buffer.byteLength(a.content)} bytes to ${a.path}`);
    } catch (e) {
      return failure(e);
    }
  },
);
server.registerTool(
  'read_file',
  { description: 'Read a UTF-8 file of the workspace', inputSchema: { path: z.string() } },
  async (a) => {
    try {
      return text(fs.readFileSync(inside(a.path), 'utf8'));
    } catch (e) {
      return failure(e);
    }
  },
);
process.stdin.on('end', () => setTimeout(() => process.exit(0), 500).unref());
server.connect(new StdioServerTransport());
