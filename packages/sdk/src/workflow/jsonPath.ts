/** JSON paths as validation errors print them: `$.agents.main.mcpServers[0].name`, `$.mcpDefinitions["my-tools"].files["a/b.cjs"]`. */
export function toJsonPath(segments: readonly PropertyKey[]): string {
  let out = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}
