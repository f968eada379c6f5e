/**
 * The run viewer's page: one HTML shell, one style sheet and one script, plain and dependency-free, kept
 * as strings so the built CLI serves them with no build step and no file lookup (why:
 * docs/decisions/run-viewer.md). Everything read from the data dir reaches the page through
 * `textContent`, DOM properties and `dataset`, never as markup: tool arguments are written by a model.
 * The script holds no template literal, so it can live in this one.
 */

/** The page shell. `token` is base64url (letters, digits, `-`, `_`), so it is safe in an attribute as is. */
export function viewerHtml(token: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('the viewer token must be base64url');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>ScienceEvolve runs</title>
<link rel="stylesheet" href="/viewer.css?token=${token}">
<script src="/viewer.js?token=${token}" defer></script>
</head>
<body>
<header><a id="home" href="#/">ScienceEvolve</a> <nav id="crumbs"></nav> <span id="live"></span></header>
<main id="main"><p class="muted">Loading…</p></main>
</body>
</html>
`;
}

/** The style sheet. */
export const VIEWER_CSS = `
:root { --fg: #1d2228; --muted: #68717c; --line: #dde1e6; --ok: #1f7a3a; --bad: #b42318; --warn: #a15c00;
  --lane: #e8eef7; --bar: #7aa2d6; --bg: #fff; --code: #f5f7f9; font: 14px/1.45 system-ui, sans-serif; }
body { margin: 0; color: var(--fg); background: var(--bg); }
header { position: sticky; top: 0; background: #f7f8fa; border-bottom: 1px solid var(--line); padding: 8px 16px;
  display: flex; gap: 12px; align-items: baseline; z-index: 2; }
header a#home { font-weight: 600; color: inherit; text-decoration: none; }
#crumbs a, #crumbs span { margin-right: 6px; }
#live { margin-left: auto; color: var(--muted); font-size: 12px; }
main { padding: 12px 16px 48px; max-width: 1400px; }
h1 { font-size: 20px; margin: 8px 0 12px; } h2 { font-size: 16px; margin: 20px 0 8px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 12px; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #eef0f3; }
.badge.succeeded, .badge.ok, .badge.ready { background: #dcf2e3; color: var(--ok); }
.badge.failed, .badge.bad { background: #fde4e1; color: var(--bad); }
.badge.running, .badge.starting { background: #e3ecfb; color: #1f4f99; }
.badge.interrupted, .badge.cancelled, .badge.pending { background: #fdf0dc; color: var(--warn); }
.question p { margin: 2px 0; } .question ul { margin: 2px 0; padding-left: 18px; }
.questions-pending { border: 1px solid var(--warn); background: #fdf6ea; padding: 6px 10px; margin: 8px 0; }
pre { background: var(--code); padding: 6px 8px; margin: 4px 0; overflow: auto; max-height: 360px;
  white-space: pre-wrap; word-break: break-word; font: 12px/1.4 ui-monospace, monospace; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.overview { border: 1px solid var(--line); padding: 8px; margin: 8px 0 16px; }
.orow { display: grid; grid-template-columns: 220px 1fr; align-items: center; gap: 8px; height: 26px; }
.olabel { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 12px; }
.track { position: relative; height: 18px; background: var(--lane); border-radius: 3px; }
.bar { position: absolute; top: 3px; height: 12px; background: var(--bar); border-radius: 3px; min-width: 2px; }
.tick { position: absolute; top: 0; height: 18px; width: 3px; margin-left: -1px; background: #2b2f36; min-width: 3px;
  opacity: 0.8; border-radius: 2px; }
.tick.tool.ok { background: var(--ok); } .tick.tool.bad { background: var(--bad); }
.tick.model { background: #7b4bb7; } .tick.service { background: #c78a00; } .tick.fail { background: var(--bad); width: 4px; }
.lane { border-left: 4px solid var(--bar); padding: 2px 0 2px 10px; margin: 16px 0; }
.lane.child { margin-left: 24px; }
.lane h2 { margin-top: 4px; }
.ev td:first-child { width: 80px; }
.ev td:nth-child(2) { width: 170px; font-size: 12px; color: var(--muted); white-space: nowrap; }
.ev.fail td { background: #fff5f4; }
details summary { cursor: pointer; color: #1f4f99; font-size: 12px; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin-top: 8px; font-size: 12px; color: var(--muted); }
.legend-item { display: inline-flex; align-items: center; gap: 5px; }
.legend .swatch { position: static; display: inline-block; width: 14px; height: 10px; margin: 0; top: auto; border-radius: 2px; opacity: 1; }
button { font: inherit; font-size: 12px; padding: 1px 8px; cursor: pointer; }
.err { color: var(--bad); }
`;

/** The script: a hash router over four views (projects, version, run) reading the viewer's JSON API and its event stream. */
export const VIEWER_JS = String.raw`'use strict';
(() => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const main = document.getElementById('main');
  const crumbs = document.getElementById('crumbs');
  const live = document.getElementById('live');
  let stream = null;
  let refresh = null;
  // The view being shown; a fetch or a timer of an earlier view must not draw over a later one.
  let view = 0;

  /** An element with a class and children; strings become text nodes, never markup. */
  function el(tag, cls, ...children) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function link(text, hash) {
    const a = el('a', '', text);
    a.href = '#' + hash;
    return a;
  }
  function badge(text, kind) {
    return el('span', 'badge ' + (kind || text), text);
  }
  function json(value) {
    return el('pre', 'json', typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  }
  function ms(n) {
    if (typeof n !== 'number' || !isFinite(n)) return '–';
    if (n < 1000) return Math.round(n) + ' ms';
    if (n < 60000) return (n / 1000).toFixed(n < 10000 ? 2 : 1) + ' s';
    const m = Math.floor(n / 60000);
    return m + ' min ' + Math.round((n % 60000) / 1000) + ' s';
  }
  function when(iso) {
    const d = new Date(iso);
    return isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
  }
  function n(x) {
    return typeof x === 'number' ? x.toLocaleString('en-US') : '0';
  }
  function tokens(u) {
    if (!u || !u.modelCalls) return '';
    return n(u.modelCalls) + ' model call' + (u.modelCalls === 1 ? '' : 's') + ', ' + n(u.inputTokens) + ' in / ' + n(u.outputTokens) + ' out';
  }
  function hashOf(...parts) {
    return '/' + parts.map(encodeURIComponent).join('/');
  }
  async function api(path, params) {
    const u = new URL(path, location.origin);
    for (const [k, v] of Object.entries(params || {})) u.searchParams.set(k, String(v));
    u.searchParams.set('token', token);
    const r = await fetch(u, { cache: 'no-store' });
    const body = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }
  function setCrumbs(...items) {
    crumbs.replaceChildren(...items.flatMap((i, k) => (k === 0 ? [i] : [el('span', 'muted', '›'), i])));
  }
  function fail(error) {
    main.replaceChildren(el('p', 'err', 'Could not load: ' + (error && error.message ? error.message : String(error))));
  }
  function stop() {
    if (stream) stream.close();
    stream = null;
    if (refresh) clearInterval(refresh);
    refresh = null;
    live.textContent = '';
  }

  // ---- projects ----
  async function showProjects() {
    const mine = view;
    setCrumbs(el('span', '', 'projects'));
    const render = async () => {
      const doc = await api('/api/projects');
      if (mine !== view) return;
      const out = [el('h1', '', 'Projects'), el('p', 'muted', 'data dir ' + doc.dataDir)];
      if (doc.projects.length === 0) out.push(el('p', 'muted', 'No projects yet.'));
      for (const p of doc.projects) {
        const sec = el('section', 'project');
        sec.dataset.project = p.project;
        // Named by its workspace (a project id made from a workspace is a hash of its path), the id beside it.
        const title = p.workspace && p.workspace !== p.project ? p.workspace : p.project;
        sec.append(el('h2', '', 'Project ' + title + ' ', el('span', 'muted project-id', title === p.project ? '' : p.project + ' '), badge('accepted v' + (p.acceptedVersion === null ? '–' : p.acceptedVersion), 'muted')));
        if (p.liveServices > 0) sec.append(el('p', 'muted', p.liveServices + ' live service process(es)'));
        sec.append(el('h3', '', 'Runs'));
        const runs = el('table', 'runs');
        runs.append(el('tr', '', el('th', '', 'run'), el('th', '', 'status'), el('th', '', 'started'), el('th', 'num', 'duration'), el('th', 'num', 'invocations'), el('th', 'num', 'tool calls'), el('th', '', 'tokens')));
        for (const r of p.runs) {
          const calls = r.invocations.reduce((s, i) => s + i.toolCalls, 0);
          const row = el('tr', '', el('td', '', link(r.run, hashOf('p', p.project, 'r', r.run))), el('td', '', badge(r.status)), el('td', '', when(r.startedAt)), el('td', 'num', ms(r.durationMs)), el('td', 'num', r.invocations.length), el('td', 'num', calls), el('td', '', tokens(r.usage)));
          row.dataset.run = r.run;
          runs.append(row);
        }
        for (const c of p.corruptRuns) runs.append(el('tr', '', el('td', '', link(c.run, hashOf('p', p.project, 'r', c.run))), el('td', '', badge('damaged', 'bad')), el('td', 'err', c.message)));
        if (p.runs.length + p.corruptRuns.length === 0) runs.append(el('tr', '', el('td', 'muted', 'no runs')));
        sec.append(runs);
        sec.append(el('h3', '', 'Accepted versions'));
        const vt = el('table', 'versions');
        vt.append(el('tr', '', el('th', '', 'version'), el('th', '', 'accepted'), el('th', '', 'by'), el('th', '', 'changed definitions'), el('th', '', 'changed agents')));
        for (const v of p.versions.slice().reverse()) {
          vt.append(el('tr', '', el('td', '', link('v' + v.version, hashOf('p', p.project, 'v', String(v.version)))), el('td', '', when(v.acceptedAt)), el('td', '', v.by), el('td', '', v.changedMcps.join(', ') || '–'), el('td', '', v.changedAgents.join(', ') || '–')));
        }
        for (const c of p.corruptVersions) vt.append(el('tr', '', el('td', '', c.version > 0 ? 'v' + c.version : 'versions'), el('td', '', badge('damaged', 'bad')), el('td', 'err', c.message)));
        sec.append(vt);
        out.push(sec);
      }
      main.replaceChildren(...out);
    };
    await render();
    if (mine === view) refresh = setInterval(() => render().catch(() => {}), 3000);
  }

  // ---- one version and its diff ----
  async function showVersion(project, version) {
    const mine = view;
    setCrumbs(link('projects', '/'), el('span', '', project), el('span', '', 'v' + version));
    const doc = await api('/api/version', { project, version });
    if (mine !== view) return;
    const v = doc.version;
    const before = doc.previous ? doc.previous.workflow : null;
    const after = v.workflow;
    const out = [el('h1', '', 'Project ' + project + ' · version ' + v.version), el('p', 'muted', 'accepted ' + when(v.acceptedAt) + ' by ' + v.by + (doc.previous ? ' · compared with v' + doc.previous.version : ' · the first version'))];
    const d = doc.diff;
    out.push(el('p', '', 'Changed definitions: ' + (d.changedMcps.join(', ') || 'none') + ' · changed agents: ' + (d.changedAgents.join(', ') || 'none') + ' · orchestration ' + (d.orchestrationChanged ? 'changed' : 'unchanged')));
    const own = (o, k) => (o && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);
    const pair = (title, a, b) => {
      const sec = el('section', 'diff');
      sec.append(el('h3', '', title));
      sec.append(el('div', 'cols', el('div', '', el('div', 'muted', 'before'), a === undefined ? el('p', 'muted', '(absent)') : json(a)), el('div', '', el('div', 'muted', 'after'), b === undefined ? el('p', 'muted', '(absent)') : json(b))));
      return sec;
    };
    for (const name of d.changedMcps) out.push(pair('definition ' + name, own(before && before.mcpDefinitions, name), own(after.mcpDefinitions, name)));
    for (const name of d.changedAgents) out.push(pair('agent ' + name, own(before && before.agents, name), own(after.agents, name)));
    if (d.orchestrationChanged) out.push(pair('orchestration', before ? before.orchestration : undefined, after.orchestration));
    const whole = el('details', '', el('summary', '', 'the whole workflow of v' + v.version), json(after));
    out.push(whole);
    main.replaceChildren(...out);
  }

  // ---- one run as a timeline ----
  async function showRun(project, runId) {
    const mine = view;
    setCrumbs(link('projects', '/'), el('span', '', project), el('span', '', 'run ' + runId));
    const state = { events: [], corrupt: [], invalid: [], summary: null, damaged: null, open: new Set(), logs: new Map(), rerender: () => {} };
    const loadSummary = async () => {
      const doc = await api('/api/run', { project, run: runId });
      state.summary = doc.summary;
      state.damaged = doc.damaged;
    };
    await loadSummary();
    if (mine !== view) return;
    let timer = null;
    const schedule = () => {
      if (timer === null) timer = setTimeout(() => { timer = null; if (mine === view) renderRun(project, runId, state); }, 25);
    };
    state.rerender = schedule;
    const u = new URL('/api/events', location.origin);
    u.searchParams.set('project', project);
    u.searchParams.set('run', runId);
    u.searchParams.set('token', token);
    stream = new EventSource(u);
    // A finished run's journal is complete: it says so, rather than "following".
    const liveText = () => (state.summary && state.summary.status === 'running' ? 'following the journal' : 'finished' + (state.summary ? ' (' + state.summary.status + ')' : ''));
    state.liveText = liveText;
    stream.addEventListener('open', () => { live.textContent = liveText(); });
    stream.addEventListener('error', () => { live.textContent = 'event stream interrupted; reconnecting…'; });
    stream.addEventListener('journal', (m) => {
      const e = JSON.parse(m.data);
      e.__index = Number(m.lastEventId);
      state.events.push(e);
      if (e.type === 'run.finished' || e.type === 'invocation.finished' || e.type === 'run.resumed') {
        loadSummary().then(() => { if (mine === view && stream) live.textContent = liveText(); schedule(); }, schedule);
      }
      schedule();
    });
    stream.addEventListener('corrupt', (m) => {
      state.corrupt.push(JSON.parse(m.data).message);
      schedule();
    });
    // A line that does not match its event's schema (the server checked it): shown as text, never drawn.
    stream.addEventListener('invalid', (m) => {
      const d = JSON.parse(m.data);
      state.invalid.push({ index: Number(m.lastEventId), message: String(d.message), raw: String(d.raw) });
      schedule();
    });
    renderRun(project, runId, state);
    refresh = setInterval(() => { if (state.summary && state.summary.status === 'running') schedule(); }, 1000);
  }

  /** What each colour of the timeline means. */
  function legend() {
    const box = el('div', 'legend');
    const item = (cls, text) => {
      const swatch = el('span', 'swatch ' + cls);
      box.append(el('span', 'legend-item', swatch, text));
    };
    item('bar', 'invocation (start to end)');
    item('tick tool ok', 'tool call answered');
    item('tick tool bad', 'tool call answered an error');
    item('tick model', 'model turn');
    item('tick service', 'service start');
    item('tick fail', 'service or attempt failed');
    return box;
  }

  function lanesOf(events) {
    const lanes = new Map();
    // A warm start's set carries the id of an invocation that may never start (collected unused): its
    // prestart events make no lane of their own.
    const started = new Set(events.filter((e) => e.type === 'invocation.started').map((e) => e.invocation));
    for (const e of events) {
      if (typeof e.invocation !== 'string') continue;
      if (String(e.type).startsWith('prestart.') && !started.has(e.invocation)) continue;
      let lane = lanes.get(e.invocation);
      if (!lane) {
        lane = { id: e.invocation, agent: e.agent, parent: null, events: [], state: null, attempts: 0, usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0 }, toolCalls: 0 };
        lanes.set(e.invocation, lane);
      }
      lane.events.push(e);
      if (e.type === 'invocation.started') { lane.parent = e.parent; lane.attempts = Math.max(lane.attempts, e.attempt); }
      if (e.type === 'invocation.state') lane.state = e.to;
      if (e.type === 'invocation.finished') lane.state = e.status;
      if (e.type === 'tool.called') lane.toolCalls += 1;
      if (e.type === 'model.called' && e.usage) {
        lane.usage.modelCalls += 1;
        lane.usage.inputTokens += e.usage.inputTokens || 0;
        lane.usage.outputTokens += e.usage.outputTokens || 0;
      }
    }
    // Main first, then each worker after its parent, in order of start.
    const ordered = [];
    const visit = (parent, depth) => {
      for (const lane of lanes.values()) {
        if ((lane.parent || null) === parent && !ordered.includes(lane)) {
          lane.depth = depth;
          ordered.push(lane);
          visit(lane.id, depth + 1);
        }
      }
    };
    visit(null, 0);
    for (const lane of lanes.values()) if (!ordered.includes(lane)) { lane.depth = 1; ordered.push(lane); }
    return ordered;
  }

  function renderRun(project, runId, state) {
    const events = state.events;
    const t = (e) => Date.parse(e.time);
    const t0 = events.length ? t(events[0]) : Date.now();
    const running = state.summary && state.summary.status === 'running';
    const t1 = Math.max(t0 + 1, running ? Date.now() : events.length ? t(events[events.length - 1]) : t0 + 1);
    const pct = (time) => Math.max(0, Math.min(100, ((time - t0) / (t1 - t0)) * 100));
    const rel = (e) => '+' + ms(t(e) - t0);

    const out = [];
    const s = state.summary;
    out.push(el('h1', '', 'Run ' + runId + ' ', s ? badge(s.status) : badge('damaged', 'bad')));
    if (state.damaged) out.push(el('p', 'err', 'run.json is damaged: ' + state.damaged));
    if (s) {
      out.push(el('p', 'muted', 'project ' + (s.workspace || project) + ' · started ' + when(s.startedAt) + ' · ' + ms(s.durationMs) + (s.finishedAt ? '' : ' so far') + (s.resumes ? ' · resumed ' + s.resumes + '×' : '') + (tokens(s.usage) ? ' · ' + tokens(s.usage) : '') + (s.traceId ? ' · trace ' + s.traceId : '')));
      // The requirement and the answer, shown open: what the run was asked and what it answered.
      if (typeof s.requirement === 'string') out.push(el('h3', '', 'Requirement'), el('pre', 'requirement', s.requirement));
      if (s.output !== null && s.output !== undefined) out.push(el('h3', '', 'Answer'), el('pre', 'answer', s.output));
      else if (s.status !== 'running') out.push(el('h3', '', 'Answer'), el('p', 'muted answer', 'no answer (the run ' + s.status + ')'));
    }
    // Questions waiting for the operator (answered at the run's terminal): shown at the top while the run
    // runs; a run that ended (interrupted, cancelled) waits for no one.
    const waiting = running ? unanswered(events) : [];
    if (waiting.length > 0) {
      const box = el('div', 'questions-pending', el('strong', '', 'Waiting for the operator'), ' (answer at the terminal of the run)');
      for (const e of waiting) box.append(el('div', '', e.agent + ' · ' + e.tool + ': ', questionBlock(e)));
      out.push(box);
    }
    for (const c of state.corrupt) out.push(el('p', 'err', 'journal: ' + c));
    for (const bad of state.invalid) {
      const row = el('div', 'err invalid-line', 'journal line ' + (bad.index + 1) + ': ' + bad.message + ' — shown as written: ');
      row.append(el('pre', 'raw', bad.raw));
      out.push(row);
    }

    // Run-level events.
    const runRows = el('table', 'ev-table');
    for (const e of events) {
      if (typeof e.invocation === 'string') continue;
      runRows.append(eventRow(e, rel(e), project, runId, state));
    }
    out.push(el('h2', '', 'Run'), runRows);

    // Overview: one track per invocation on one time axis.
    const lanes = lanesOf(events);
    const overview = el('div', 'overview');
    overview.append(el('div', 'muted', 'timeline: ' + ms(t1 - t0) + ' from the first event'));
    for (const lane of lanes) {
      const track = el('div', 'track');
      const first = t(lane.events[0]);
      const last = running && lane.state !== 'succeeded' && lane.state !== 'failed' ? t1 : t(lane.events[lane.events.length - 1]);
      const bar = el('div', 'bar');
      bar.style.left = pct(first) + '%';
      bar.style.width = Math.max(0.3, pct(last) - pct(first)) + '%';
      bar.title = lane.agent + ' ' + lane.id + ': ' + ms(last - first);
      track.append(bar);
      for (const e of lane.events) {
        let cls = null;
        let label = '';
        let took = 0;
        if (e.type === 'tool.called') { cls = 'tick tool ' + (e.ok ? 'ok' : 'bad'); label = e.tool + ' (' + ms(e.durationMs) + ')'; took = e.durationMs; }
        else if (e.type === 'model.called') { cls = 'tick model'; label = 'model turn ' + e.turn + ' (' + ms(e.durationMs) + ')'; took = e.durationMs; }
        else if (e.type === 'service.ready') { cls = 'tick service'; label = e.service + ' ready in ' + ms(e.startMs); took = e.startMs; }
        else if (e.type === 'service.failed' || e.type === 'invocation.attempt_failed') { cls = 'tick fail'; label = e.type; }
        if (!cls) continue;
        const tick = el('div', cls);
        // A span from the start to the end of what took time (a call, a turn, a service start), else a mark.
        const from = pct(t(e) - (typeof took === 'number' && took > 0 ? took : 0));
        tick.style.left = from + '%';
        if (pct(t(e)) - from > 0.5) tick.style.width = pct(t(e)) - from + '%';
        tick.title = label;
        track.append(tick);
      }
      const row = el('div', 'orow', el('div', 'olabel', '\u00a0'.repeat(lane.depth * 2) + lane.agent + ' · ' + lane.id), track);
      row.dataset.invocation = lane.id;
      overview.append(row);
    }
    overview.append(legend());
    out.push(overview);

    // Lanes in detail.
    for (const lane of lanes) {
      const sec = el('section', 'lane' + (lane.depth > 0 ? ' child' : ''));
      sec.dataset.invocation = lane.id;
      sec.dataset.agent = lane.agent;
      const finished = lane.events.find((e) => e.type === 'invocation.finished');
      const dur = t(finished || lane.events[lane.events.length - 1]) - t(lane.events[0]);
      sec.append(el('h2', '', (lane.agent === 'main' ? 'Main' : 'Agent ' + lane.agent) + ' ', el('span', 'muted', lane.id), ' ', badge(lane.state || 'starting')));
      sec.append(el('p', 'muted', (lane.parent ? 'delegated by ' + lane.parent + ' · ' : '') + lane.attempts + ' attempt' + (lane.attempts === 1 ? '' : 's') + ' · ' + ms(dur) + ' · ' + lane.toolCalls + ' tool call' + (lane.toolCalls === 1 ? '' : 's') + (tokens(lane.usage) ? ' · ' + tokens(lane.usage) : '')));
      const table = el('table', 'ev-table');
      const pending = new Map();
      for (const e of lane.events) {
        if (e.type === 'tool.calling' || e.type === 'tool.asking') { const k = e.type + ' ' + e.tool; pending.set(k, (pending.get(k) || []).concat([e])); continue; }
        if (e.type === 'tool.called') { const list = pending.get('tool.calling ' + e.tool); if (list) list.shift(); }
        if (e.type === 'tool.question') { const list = pending.get('tool.asking ' + e.tool); if (list) list.shift(); }
        table.append(eventRow(e, rel(e), project, runId, state));
      }
      for (const list of pending.values()) for (const e of list) table.append(eventRow(e, rel(e), project, runId, state));
      sec.append(table);
      out.push(sec);
    }
    if (events.length === 0) out.push(el('p', 'muted', 'The journal has no events yet.'));
    main.replaceChildren(...out);
  }

  function detail(state, key, title, ...body) {
    const d = el('details', '', el('summary', '', title), ...body);
    d.open = state.open.has(key);
    d.addEventListener('toggle', () => { if (d.open) state.open.add(key); else state.open.delete(key); });
    return d;
  }

  function logButton(project, runId, e, state) {
    const key = e.servicesId + '/' + e.service;
    const box = el('div', 'log');
    const show = (text) => box.replaceChildren(json(text));
    const b = el('button', '', 'stderr log');
    b.dataset.log = key;
    b.addEventListener('click', () => {
      if (state.logs.has(key)) { state.logs.delete(key); box.replaceChildren(); return; }
      // Kept in the state and drawn by a new render: the journal may have re-rendered the run (and detached
      // this box) while the log was on its way.
      api('/api/log', { project, run: runId, servicesId: e.servicesId, service: e.service }).then(
        (doc) => { state.logs.set(key, doc.text === '' ? '(empty)' : doc.text); state.rerender(); },
        (err) => { state.logs.set(key, 'could not read the log: ' + err.message); state.rerender(); },
      );
    });
    if (state.logs.has(key)) show(state.logs.get(key));
    return el('div', '', b, box);
  }

  function errText(err) {
    if (!err) return '';
    return (err.code ? err.code + ': ' : '') + (err.message || '') + (err.remedy ? ' — ' + err.remedy : '');
  }

  // The tool.asking events no tool.question answered yet (per invocation and tool, in order).
  function unanswered(events) {
    const open = new Map();
    for (const e of events) {
      const k = e.invocation + ' ' + e.tool;
      if (e.type === 'tool.asking') open.set(k, (open.get(k) || []).concat([e]));
      if (e.type === 'tool.question' && open.has(k)) open.get(k).shift();
    }
    return [...open.values()].flat();
  }

  // A service's question: its message, a URL as text (never a link: it is not opened), the fields asked for.
  function questionBlock(e) {
    const box = el('div', 'question');
    box.append(el('p', 'question-message', e.message));
    if (e.mode === 'url') box.append(el('p', 'question-url', 'URL (shown, never opened): ', el('code', '', String(e.url || ''))));
    const schema = e.requestedSchema || {};
    const props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    const names = Object.keys(props);
    if (names.length > 0) {
      const list = el('ul', 'question-fields');
      for (const name of names) {
        const f = props[name] && typeof props[name] === 'object' ? props[name] : {};
        const facts = [f.type, f.description, required.includes(name) ? 'required' : null, f.default !== undefined ? 'default ' + JSON.stringify(f.default) : null].filter((x) => typeof x === 'string');
        const li = el('li', '', el('code', '', name), facts.length ? ' (' + facts.join('; ') + ')' : '');
        li.dataset.field = name;
        list.append(li);
      }
      box.append(list);
    }
    return box;
  }

  // The answer as journaled (secret fields are REDACTED there already).
  function answerBlock(e) {
    const box = el('div', 'question-answer', 'answer: ', badge(e.action, e.action === 'accept' ? 'ok' : 'bad'), ' (policy ' + e.policy + ')');
    if (e.content && typeof e.content === 'object') {
      const list = el('ul', '');
      for (const [name, value] of Object.entries(e.content)) {
        const li = el('li', '', el('code', '', name), ': ' + (typeof value === 'string' ? value : JSON.stringify(value)));
        li.dataset.field = name;
        list.append(li);
      }
      box.append(list);
    }
    return box;
  }

  function eventRow(e, at, project, runId, state) {
    const key = String(e.__index);
    const what = el('td', '');
    let fail = false;
    switch (e.type) {
      case 'run.started':
        what.append('project ' + e.project + ' · ', link('version ' + e.version, hashOf('p', e.project, 'v', String(e.version))), ' · workspace ' + e.workspace + (e.git ? ' · git' : '') + (e.traceId ? ' · trace ' + e.traceId : ''));
        break;
      case 'run.resumed':
        what.append('resumed (' + e.resumes + ') from ' + e.from + '; continuing ' + (e.interrupted || []).join(', ') + (e.traceId ? ' · trace ' + e.traceId : ''));
        break;
      case 'run.finished':
        fail = e.status === 'failed';
        what.append(badge(e.status), ' ', tokens(e.usage));
        if (e.error) what.append(el('div', 'err', errText(e.error)));
        if (e.output !== null && e.output !== undefined) what.append(detail(state, key, 'output', json(e.output)));
        break;
      case 'invocation.started':
        what.append('attempt ' + e.attempt + (e.restarted ? ' (restarted)' : '') + (e.fromCheckpoint ? ' from its checkpoint' : '') + ' · services: ' + ((e.services || []).join(', ') || 'none'));
        break;
      case 'invocation.state':
        what.append((e.from || '∅') + ' → ', badge(e.to));
        break;
      case 'invocation.attempt_failed':
        fail = true;
        what.append('attempt ' + e.attempt + ' failed' + (e.willRetry ? ', will retry' : ', no retry left'), el('div', 'err', errText(e.error)));
        if (e.error && e.error.data) what.append(detail(state, key, 'diagnostics', json(e.error.data)));
        break;
      case 'invocation.finished':
        fail = e.status === 'failed';
        what.append(badge(e.status), ' after ' + e.attempts + ' attempt' + (e.attempts === 1 ? '' : 's') + (e.branch ? ' · branch ' + e.branch : '') + (e.commit ? ' · commit ' + e.commit : '') + (tokens(e.usage) ? ' · ' + tokens(e.usage) : ''));
        if (e.error) what.append(el('div', 'err', errText(e.error)));
        break;
      case 'invocation.checkpoint':
        what.append('checkpoint at step ' + e.step);
        break;
      case 'service.ready':
        what.append(el('strong', '', e.service), ' ready in ' + ms(e.startMs) + (e.pid ? ' · pid ' + e.pid : '') + (e.url ? ' · ' + e.url : '') + ' · ' + e.tools + ' tools, ' + e.resources + ' resources, ' + e.prompts + ' prompts' + (e.protocolVersion ? ' · ' + e.protocolVersion : ''));
        if (e.kind === 'project') what.append(logButton(project, runId, e, state));
        break;
      case 'service.failed':
        fail = true;
        what.append(el('strong', '', e.service), ' failed', el('div', 'err', errText(e.error)));
        if (e.kind === 'project') what.append(logButton(project, runId, e, state));
        break;
      case 'service.exited':
        what.append(el('strong', '', e.service), ' exited' + (e.expected ? '' : ' unexpectedly') + ' (' + (e.signal ? 'signal ' + e.signal : 'code ' + e.exitCode) + (e.forced ? ', forced' : '') + ')' + (e.survivors && e.survivors.length ? ' · survivors ' + e.survivors.join(', ') : ''));
        if (!e.expected) fail = true;
        break;
      case 'tool.calling':
        what.append(el('strong', '', e.tool), ' ', badge('in progress', 'pending'));
        break;
      case 'tool.asking':
        what.append(el('strong', '', e.tool), ' ', badge('waiting for the operator', 'pending'), questionBlock(e));
        break;
      case 'tool.question':
        what.append(el('strong', '', e.tool), ' asked', questionBlock(e), answerBlock(e));
        break;
      case 'tool.called': {
        fail = !e.ok;
        what.append(el('strong', 'tool-name', e.tool), ' ', badge(e.ok ? 'ok' : 'error', e.ok ? 'ok' : 'bad'), ' ' + ms(e.durationMs));
        const args = detail(state, key + 'a', 'arguments', json(e.arguments));
        args.classList.add('tool-args');
        const result = detail(state, key + 'r', 'result', json(e.summary));
        result.classList.add('tool-result');
        what.append(args, result);
        break;
      }
      case 'model.called':
        what.append('turn ' + e.turn + ' · ' + e.model + ' · ' + n(e.usage && e.usage.inputTokens) + ' in / ' + n(e.usage && e.usage.outputTokens) + ' out' + (e.usage && e.usage.cachedInputTokens ? ' · ' + n(e.usage.cachedInputTokens) + ' cached' : '') + (e.usage && e.usage.reasoningTokens ? ' · ' + n(e.usage.reasoningTokens) + ' reasoning' : '') + ' tokens · ' + ms(e.durationMs) + (e.finishReason ? ' · ' + e.finishReason : ''));
        break;
      case 'model.retry':
        fail = true;
        what.append('turn ' + e.turn + ' retried (attempt ' + e.attempt + ') after ' + ms(e.delayMs) + (e.status ? ' · HTTP ' + e.status : '') + ': ' + e.message);
        break;
      case 'workflow.reconfigured':
        what.append(link('version ' + e.version, hashOf('p', project, 'v', String(e.version))), ' · definitions ' + (e.changedMcps.join(', ') || '–') + ' · agents ' + (e.changedAgents.join(', ') || '–'));
        break;
      default:
        if (typeof e.service === 'string') what.append(el('strong', '', e.service), ' ');
        if (e.error) { fail = true; what.append(el('div', 'err', errText(e.error))); }
        what.append(detail(state, key, 'details', json(e)));
    }
    const row = el('tr', 'ev' + (fail ? ' fail' : ''), el('td', 'num', at), el('td', '', e.type), what);
    row.dataset.type = e.type;
    if (typeof e.tool === 'string') row.dataset.tool = e.tool;
    return row;
  }

  async function route() {
    stop();
    view += 1;
    const mine = view;
    const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
    try {
      if (parts.length === 4 && parts[0] === 'p' && parts[2] === 'r') await showRun(parts[1], parts[3]);
      else if (parts.length === 4 && parts[0] === 'p' && parts[2] === 'v') await showVersion(parts[1], parts[3]);
      else await showProjects();
    } catch (error) {
      if (mine === view) fail(error);
    }
  }
  window.addEventListener('hashchange', route);
  route();
})();
`;
