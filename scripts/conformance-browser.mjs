#!/usr/bin/env node
// A scripted browser for the conformance client scenarios and the e2e tests (BROWSER=this file): it opens
// the authorization URL it is given without a person — the test authorization servers grant at once and
// answer with a redirect — and follows that redirect to the loopback address `auth login` listens on.
// Redirects are followed one at a time (at most 5), as a browser would.
const url = process.argv[2];
if (url === undefined) {
  console.error('usage: conformance-browser.mjs <authorization URL>');
  process.exit(2);
}
let next = url;
for (let hop = 0; hop < 5; hop++) {
  const response = await fetch(next, { redirect: 'manual' });
  await response.arrayBuffer().catch(() => {});
  const location = response.headers.get('location');
  if (location === null) break;
  next = new URL(location, next).href;
  if (new URL(next).hostname === '127.0.0.1' && new URL(next).pathname === '/callback') {
    const done = await fetch(next);
    await done.arrayBuffer().catch(() => {});
    process.exit(0);
  }
}
console.error(`conformance-browser: no redirect to a loopback /callback came back from ${new URL(url).origin}`);
process.exit(1);
