/** `redactCommand`: a table of launch commands, each with what output may show of it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactCommand } from '../../packages/sdk/src/redact.js';

test('redactCommand: each launch command with its shown form', () => {
  const cases: [string, string][] = [
    ['node server.js --port 8080 --verbose', 'node server.js --port 8080 --verbose'],
    ['node s.js --token abcd1234', 'node s.js --token REDACTED'],
    [
      'node s.js --api-key=abcd1234 --client-secret "two words"',
      'node s.js --api-key=REDACTED --client-secret REDACTED',
    ],
    ["python -m srv --password 'p a s s'", "python -m srv --password 'REDACTED'"],
    ['GITHUB_TOKEN=ghp_abcdef node s.js', 'GITHUB_TOKEN=REDACTED node s.js'],
    [
      'npx mcp-remote https://user:pw12@example.invalid/mcp?key=qs123',
      'npx mcp-remote https://example.invalid/mcp?key=REDACTED',
    ],
    ['npx mcp-remote https://example.invalid/mcp', 'npx mcp-remote https://example.invalid/mcp'],
    ['curl -H "Authorization: Bearer tok12345" x', 'curl -H "Authorization: REDACTED" x'],
    ['srv --header "X-Api-Key: zzzz9999"', 'srv --header "X-Api-Key: REDACTED"'],
  ];
  for (const [command, shown] of cases) assert.equal(redactCommand(command), shown, command);
});
