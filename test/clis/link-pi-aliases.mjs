// pi-mcp-adapter 2.36 imports pi's packages under their new scope, @earendil-works/pi-*, while
// pi-coding-agent 0.73 is published as @mariozechner/pi-*. Link the new names to the installed packages
// (links, not copies: the adapter must share pi's own module instances). Runs after `npm ci`.
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const modules = join(import.meta.dirname, 'node_modules');
// `npm install --package-lock-only` runs this too, with nothing installed: nothing to link then.
if (!existsSync(join(modules, '@mariozechner'))) process.exit(0);
mkdirSync(join(modules, '@earendil-works'), { recursive: true });
for (const name of ['pi-ai', 'pi-agent-core', 'pi-coding-agent', 'pi-tui']) {
  const target = join(modules, '@mariozechner', name);
  if (!existsSync(target)) throw new Error(`${target} is not installed`);
  const link = join(modules, '@earendil-works', name);
  rmSync(link, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  symlinkSync(join('..', '@mariozechner', name), link, 'dir');
}
