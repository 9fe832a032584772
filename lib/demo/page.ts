/** Options of {@link renderDemoPage}. */
export interface DemoPageOptions {
  /** Which agent answers, shown in the header (e.g. `scripted agent · no network`). Default: `agent`. */
  agentLabel?: string;
  /** Where the page POSTs its RunAgentInput. Default: `/agent`. */
  endpoint?: string;
  /** Example prompts offered while the conversation is empty. */
  suggestions?: readonly string[];
  /** The adapter the model's stream goes through, named on the empty page. Default: `fromOpenAIChatCompletions()`. */
  adapter?: string;
}

/** Text made safe to put in HTML. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const DEFAULT_SUGGESTIONS = ["What's the weather in Tokyo right now?", 'Is it a good evening for a walk in Lisbon?', 'Weather and local time in New York, please.'];

/**
 * The demo's single-file web page: inline CSS and JavaScript, no external assets, no build step.
 *
 * It POSTs a RunAgentInput (`threadId`, `runId`, the conversation so far plus the user's text,
 * `state`, `tools: []`, `context: []`) to `endpoint` with `Accept: text/event-stream`, reads the
 * response with `fetch` and a `ReadableStream` reader, splits the SSE `data:` frames itself, and
 * renders the AG-UI events live: assistant text, reasoning, tool calls with their streaming
 * arguments and results, state (applying STATE_DELTA as RFC 6902), run status, usage and errors.
 * The conversation (messages and state) is kept across turns and sent back with each run.
 *
 * Runs outlive the page's connection (the demo server's run broker serves `endpoint` and the
 * routes under it):
 *
 * 1. The thread id is kept in `localStorage` (or named by `?thread=<id>`); on load with a known
 *    thread the page POSTs `<endpoint>/connect` and draws the rebuilt conversation, then the
 *    running run, if any, live from its start.
 * 2. When the stream breaks before the run's terminal event, it shows "reconnecting…" and resumes
 *    with GET `<endpoint>/threads/<t>/runs/<r>/events` and `Last-Event-ID` (the last `id:` seen):
 *    at most 6 attempts, 250 ms to 4 s apart with jitter; a 4xx answer ends the run with its reason.
 * 3. Stop POSTs `<endpoint>/threads/<t>/runs/<r>/stop`; the run ends with RUN_FINISHED `cancelled`.
 *    Reasoning left without its END when a run ends says so ("reasoning stopped", "reasoning cut off").
 *
 * On a narrow screen (860 px or less, a phone) the layout is one column: a header button swaps the
 * chat for the State / Run / Events panel and back.
 *
 * @param options The agent label, the endpoint, the example prompts and the adapter's name.
 * @return The HTML document, as a string.
 */
export function renderDemoPage(options: DemoPageOptions = {}): string {
  const config = {
    agentLabel: options.agentLabel ?? 'agent',
    endpoint: options.endpoint ?? '/agent',
    suggestions: options.suggestions ?? DEFAULT_SUGGESTIONS,
  };
  // JSON inside <script>: `<` escaped so that no value can close the element.
  const configJson = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agui-rx demo</title>
<link rel="icon" href="data:,">
<style>${PAGE_CSS}</style>
</head>
<body>
<header class="top">
  <div class="brand"><span class="logo">agui-rx</span><span class="sub">AG-UI over SSE, live</span></div>
  <div class="agent" id="agent-label"></div>
  <div class="status" id="status" data-status="idle"><span class="dot"></span><span id="status-text">idle</span></div>
  <button type="button" class="panel-toggle" id="panel-toggle" aria-controls="side" aria-expanded="false">State &amp; events</button>
</header>
<main class="layout">
  <section class="chat">
    <div class="messages" id="messages" role="log" aria-live="polite">
      <div class="empty" id="empty">
        <h1>Ask the agent something</h1>
        <p>Each answer streams through <code>${escapeHtml(options.adapter ?? 'fromOpenAIChatCompletions()')}</code> and <code>toAgui()</code> to this page as AG-UI events:
        text, reasoning, parallel tool calls with their arguments and results, and state.</p>
        <div class="suggestions" id="suggestions"></div>
      </div>
    </div>
    <form class="composer" id="composer">
      <textarea id="input" rows="1" placeholder="Ask about a city’s weather and time…" aria-label="Message" autofocus></textarea>
      <button type="submit" id="send" class="primary">Send</button>
      <button type="button" id="stop" class="secondary" hidden>Stop</button>
    </form>
  </section>
  <aside class="side" id="side" aria-label="State, run and events">
    <section class="card">
      <h2>State</h2>
      <pre class="json" id="state">{}</pre>
    </section>
    <section class="card">
      <h2>Run <button type="button" class="link" id="new-thread">new thread</button></h2>
      <dl class="run" id="run">
        <dt>thread</dt><dd><a id="run-thread" href="?">–</a></dd>
        <dt>run</dt><dd id="run-id">–</dd>
        <dt>events</dt><dd id="run-events">0</dd>
        <dt>time</dt><dd id="run-time">–</dd>
        <dt>tokens</dt><dd id="run-usage">–</dd>
        <dt>outcome</dt><dd id="run-outcome">–</dd>
      </dl>
    </section>
    <section class="card grow">
      <h2>Events <button type="button" class="link" id="clear-log">clear</button></h2>
      <ol class="log" id="log"></ol>
    </section>
  </aside>
</main>
<script type="application/json" id="config">${configJson}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

const PAGE_CSS = `
:root {
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1d2330; --muted: #6b7280; --line: #e3e6eb;
  --accent: #4f46e5; --accent-ink: #ffffff; --accent-soft: #eef0ff;
  --ok: #15803d; --ok-soft: #e8f6ec; --warn: #b45309; --warn-soft: #fdf3e3; --err: #b91c1c; --err-soft: #fdecec;
  --code: #f3f4f6; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1115; --panel: #171a21; --ink: #e6e8ee; --muted: #9aa1ad; --line: #2a2f3a;
    --accent: #818cf8; --accent-ink: #0f1115; --accent-soft: #23264a;
    --ok: #4ade80; --ok-soft: #15291d; --warn: #fbbf24; --warn-soft: #2e2411; --err: #f87171; --err-soft: #301819;
    --code: #1f232c;
  }
}
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; background: var(--bg); color: var(--ink); display: flex; flex-direction: column; }
code, pre { font-family: var(--mono); font-size: 12.5px; }
.top { display: flex; align-items: center; gap: 16px; padding: 12px 20px; background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { display: flex; align-items: baseline; gap: 10px; }
.logo { white-space: nowrap; font-weight: 700; font-size: 18px; letter-spacing: -0.01em; }
.logo::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 3px; background: var(--accent); margin-right: 8px; }
.sub { color: var(--muted); font-size: 13px; }
.agent { margin-left: auto; font-size: 12.5px; color: var(--muted); background: var(--code); border: 1px solid var(--line); border-radius: 999px; padding: 3px 10px; }
.status { display: flex; align-items: center; gap: 6px; font-size: 13px; color: var(--muted); min-width: 96px; }
.status .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--muted); }
.status[data-status="running"] .dot { background: var(--accent); animation: pulse 1s ease-in-out infinite; }
.status[data-status="finished"] .dot { background: var(--ok); }
.status[data-status="error"] .dot, .status[data-status="cancelled"] .dot { background: var(--err); }
.status[data-status="reconnecting"] .dot { background: var(--warn); animation: pulse 0.5s ease-in-out infinite; }
@keyframes pulse { 50% { opacity: 0.3; } }
.layout { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 16px; padding: 16px 20px 20px; }
.chat { display: flex; flex-direction: column; min-height: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 12px; overflow: hidden; }
.messages { flex: 1; overflow-y: auto; padding: 20px 22px; display: flex; flex-direction: column; gap: 14px; }
.empty { margin: auto; max-width: 520px; text-align: center; color: var(--muted); }
.empty h1 { font-size: 20px; color: var(--ink); margin: 0 0 8px; }
.empty code { background: var(--code); padding: 1px 5px; border-radius: 4px; }
.suggestions { display: flex; flex-wrap: wrap; gap: 8px; justify-content: center; margin-top: 16px; }
.suggestions button { font: inherit; font-size: 13.5px; color: var(--ink); background: var(--panel); border: 1px solid var(--line); border-radius: 999px; padding: 6px 12px; cursor: pointer; }
.suggestions button:hover { border-color: var(--accent); color: var(--accent); }
.msg { max-width: 80%; }
.msg.user { align-self: flex-end; background: var(--accent); color: var(--accent-ink); padding: 9px 14px; border-radius: 14px 14px 4px 14px; white-space: pre-wrap; }
.msg.assistant, .msg.reasoning, .tool-call, .notice { align-self: flex-start; }
.msg.assistant { padding: 2px 0; white-space: pre-wrap; }
.msg.assistant .who, .msg.reasoning summary { font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.streaming .text::after { content: ""; display: inline-block; width: 7px; height: 1.05em; margin-left: 2px; vertical-align: text-bottom; background: var(--accent); animation: pulse 0.8s steps(2) infinite; }
.msg.reasoning { border-left: 3px solid var(--line); padding: 2px 0 2px 12px; color: var(--muted); font-style: italic; white-space: pre-wrap; }
.msg.reasoning summary { cursor: pointer; font-style: normal; list-style: none; }
.msg.reasoning summary::-webkit-details-marker { display: none; }
.tool-call { border: 1px solid var(--line); border-radius: 10px; overflow: hidden; background: var(--panel); }
.tool-call header { display: flex; align-items: center; gap: 8px; padding: 7px 12px; background: var(--code); border-bottom: 1px solid var(--line); }
.tool-call .name { font-family: var(--mono); font-weight: 600; font-size: 13px; }
.tool-call .name::before { content: "ƒ "; color: var(--accent); }
.tool-call .badge { margin-left: auto; font-size: 11.5px; padding: 1px 8px; border-radius: 999px; background: var(--accent-soft); color: var(--accent); }
.tool-call[data-status="done"] .badge { background: var(--ok-soft); color: var(--ok); }
.tool-call[data-status="pending"] .badge { background: var(--warn-soft); color: var(--warn); }
.tool-call .section { padding: 8px 12px; }
.tool-call .section + .section { border-top: 1px dashed var(--line); }
.tool-call .label { font-size: 11px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin-bottom: 2px; }
.tool-call pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
/* Parallel calls side by side. */
.tool-group { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 10px; align-self: stretch; align-items: start; }
.notice { font-size: 13px; padding: 8px 12px; border-radius: 8px; }
.notice.error { background: var(--err-soft); color: var(--err); border: 1px solid color-mix(in srgb, var(--err) 30%, transparent); }
.notice.cancelled { background: var(--warn-soft); color: var(--warn); }
.notice.reconnect { background: var(--accent-soft); color: var(--accent); }
.run-summary { align-self: center; font-size: 12px; color: var(--muted); display: flex; align-items: center; gap: 8px; }
.run-summary::before, .run-summary::after { content: ""; width: 40px; height: 1px; background: var(--line); }
.composer { display: flex; gap: 8px; padding: 12px; border-top: 1px solid var(--line); background: var(--panel); }
.composer textarea { flex: 1; resize: none; font: inherit; color: var(--ink); background: var(--bg); border: 1px solid var(--line); border-radius: 10px; padding: 9px 12px; max-height: 160px; }
.composer textarea:focus { outline: 2px solid color-mix(in srgb, var(--accent) 40%, transparent); border-color: var(--accent); }
button.primary, button.secondary { font: inherit; font-weight: 600; border-radius: 10px; padding: 0 18px; cursor: pointer; border: 1px solid transparent; }
button.primary { background: var(--accent); color: var(--accent-ink); }
button.primary:disabled { opacity: 0.5; cursor: default; }
button.secondary { background: var(--panel); color: var(--err); border-color: var(--line); }
.side { display: flex; flex-direction: column; gap: 16px; min-height: 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 12px 14px; }
.card.grow { flex: 1; min-height: 0; display: flex; flex-direction: column; }
.card h2 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 8px; display: flex; align-items: center; }
button.link { margin-left: auto; font: inherit; font-size: 11.5px; text-transform: none; letter-spacing: 0; color: var(--muted); background: none; border: 0; cursor: pointer; }
.json { margin: 0; background: var(--code); border-radius: 8px; padding: 10px; max-height: 240px; overflow: auto; transition: box-shadow 0.6s; }
.json.changed { box-shadow: 0 0 0 2px var(--accent); transition: none; }
.run { display: grid; grid-template-columns: auto 1fr; gap: 3px 12px; margin: 0; font-size: 13px; }
.run dt { color: var(--muted); }
.run dd a { color: inherit; }
.run dd { margin: 0; font-family: var(--mono); font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.log { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1; font-family: var(--mono); font-size: 11.5px; }
.log li { display: flex; gap: 8px; padding: 1px 0; white-space: nowrap; }
.log .t { color: var(--muted); min-width: 44px; text-align: right; }
.log .type { font-weight: 600; }
.log .detail { color: var(--muted); overflow: hidden; text-overflow: ellipsis; }
.log .k-run { color: var(--accent); } .log .k-text { color: var(--ink); } .log .k-tool { color: var(--warn); }
.log .run-mark { color: var(--muted); border-top: 1px solid var(--line); margin-top: 4px; padding-top: 3px; overflow: hidden; text-overflow: ellipsis; }
.log .run-mark:first-child { border-top: 0; margin-top: 0; }
.log .k-state { color: var(--ok); } .log .k-error { color: var(--err); } .log .k-reasoning { color: var(--muted); }
/* Narrow screens: one column, and a header button that swaps the chat for the State/Run/Events panel. */
.panel-toggle { display: none; font: inherit; font-size: 13px; color: var(--ink); background: var(--panel); border: 1px solid var(--line); border-radius: 999px; padding: 4px 12px; cursor: pointer; white-space: nowrap; }
@media (max-width: 860px) {
  .layout { grid-template-columns: minmax(0, 1fr); grid-template-rows: minmax(0, 1fr); padding: 10px; }
  .side, .sub { display: none; }
  .panel-toggle { display: inline-block; }
  body.show-side .side { display: flex; }
  body.show-side .chat { display: none; }
  .side .card.grow { min-height: 180px; }
  .msg { max-width: 92%; }
}
@media (max-width: 560px) { .agent { display: none; } .status { margin-left: auto; } }
`;

// The page's script, plain ES2020 for any current browser. Written with String.raw so that its
// backslashes reach the browser unchanged; it must contain no backquote and no dollar-brace.
const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('config').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var messagesEl = $('messages'), inputEl = $('input'), sendEl = $('send'), stopEl = $('stop');

  // The thread survives a reload: ?thread=<id> names it (a link to it opens it anywhere), else localStorage remembers it.
  var STORAGE_KEY = 'agui-rx-demo:threadId';
  var MAX_RESUME_ATTEMPTS = 6;
  var restored = storedThread();
  var threadId = restored || newId('thread');
  rememberThread(threadId);
  // The conversation as AG-UI messages, and the agent's state: sent back with every run.
  var history = [];
  var state = {};
  // The run being followed live: { runId, view, lastId, done, stopping }; null when idle.
  var active = null;
  // Tool call cards by tool call id, so that a result (live or restored) finds its card.
  var cards = {};

  $('agent-label').textContent = config.agentLabel;
  showThread();
  config.suggestions.forEach(function (text) {
    var button = el('button', null, text);
    button.type = 'button';
    button.addEventListener('click', function () { inputEl.value = text; send(); });
    $('suggestions').appendChild(button);
  });
  $('composer').addEventListener('submit', function (event) { event.preventDefault(); send(); });
  inputEl.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  inputEl.addEventListener('input', autosize);
  stopEl.addEventListener('click', stop);
  $('panel-toggle').addEventListener('click', function () {
    var showSide = document.body.classList.toggle('show-side');
    this.setAttribute('aria-expanded', String(showSide));
    this.textContent = showSide ? 'Chat' : 'State & events';
    if (showSide) followLog();
  });
  $('clear-log').addEventListener('click', function () { $('log').textContent = ''; });
  $('new-thread').addEventListener('click', function () {
    rememberThread(newId('thread'));
    location.href = location.pathname;
  });
  // A known thread: rebuild it, and follow its running run if it has one.
  if (restored) connectThread();

  function storedThread() {
    var fromUrl = new URLSearchParams(location.search).get('thread');
    if (fromUrl) return fromUrl;
    try { return localStorage.getItem(STORAGE_KEY); } catch (e) { return null; }
  }
  function rememberThread(id) {
    try { localStorage.setItem(STORAGE_KEY, id); } catch (e) { /* storage disabled: the URL still names the thread */ }
  }
  function showThread() {
    var link = $('run-thread');
    link.textContent = threadId;
    link.href = '?thread=' + encodeURIComponent(threadId);
  }

  function newId(prefix) {
    var random = window.crypto && crypto.randomUUID ? crypto.randomUUID() : Math.random().toString(36).slice(2) + Date.now().toString(36);
    return prefix + '-' + random;
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function autosize() {
    inputEl.style.height = 'auto';
    inputEl.style.height = Math.min(inputEl.scrollHeight, 160) + 'px';
  }

  // A scroller follows new content while the reader has not scrolled up (a panel that shrinks must not unpin it).
  // Scroll events arrive a frame late, after more content: only a position above our own last scroll means the reader moved.
  function pinned(scroller) {
    var follow = true, autoTop = 0;
    scroller.addEventListener('scroll', function () {
      follow = scroller.scrollTop >= autoTop - 4 || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    });
    return function () {
      if (!follow) return;
      scroller.scrollTop = scroller.scrollHeight;
      autoTop = scroller.scrollTop;
    };
  }
  var followMessages = pinned(messagesEl), followLog = pinned($('log'));
  function append(node) {
    var empty = $('empty');
    if (empty) empty.remove();
    messagesEl.appendChild(node);
    followMessages();
    return node;
  }

  function setStatus(status, text) {
    $('status').setAttribute('data-status', status);
    $('status-text').textContent = text || status;
  }

  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  function showState() {
    var node = $('state');
    node.textContent = JSON.stringify(state, null, 2);
    node.classList.add('changed');
    setTimeout(function () { node.classList.remove('changed'); }, 50);
  }

  // RFC 6902 JSON Patch, applied to a copy of the state (STATE_DELTA).
  function applyPatch(doc, ops) {
    var root = { '': JSON.parse(JSON.stringify(doc === undefined ? null : doc)) };
    ops.forEach(function (op) {
      if (op.op === 'test') {
        if (JSON.stringify(get(root, op.path)) !== JSON.stringify(op.value)) throw new Error('JSON Patch test failed at ' + op.path);
      } else if (op.op === 'remove') { remove(root, op.path); }
      else if (op.op === 'add') { add(root, op.path, clone(op.value)); }
      else if (op.op === 'replace') { remove(root, op.path); add(root, op.path, clone(op.value)); }
      else if (op.op === 'copy') { add(root, op.path, clone(get(root, op.from))); }
      else if (op.op === 'move') { var value = get(root, op.from); remove(root, op.from); add(root, op.path, value); }
      else throw new Error('Unknown JSON Patch operation ' + op.op);
    });
    return root[''];
  }
  function clone(value) { return value === undefined ? undefined : JSON.parse(JSON.stringify(value)); }
  function tokens(path) {
    if (path === '') return [''];
    if (path.charAt(0) !== '/') throw new Error('Bad JSON Pointer ' + path);
    return [''].concat(path.slice(1).split('/').map(function (t) { return t.replace(/~1/g, '/').replace(/~0/g, '~'); }));
  }
  function parentOf(root, path) {
    var parts = tokens(path), node = root;
    for (var i = 0; i < parts.length - 1; i++) {
      if (node === null || typeof node !== 'object' || !(parts[i] in node)) throw new Error('No such path ' + path);
      node = node[parts[i]];
    }
    if (node === null || typeof node !== 'object') throw new Error('No such path ' + path);
    return { node: node, key: parts[parts.length - 1] };
  }
  function get(root, path) { var p = parentOf(root, path); return p.node[p.key]; }
  function add(root, path, value) {
    var p = parentOf(root, path);
    if (Array.isArray(p.node)) p.node.splice(p.key === '-' ? p.node.length : Number(p.key), 0, value);
    else p.node[p.key] = value;
  }
  function remove(root, path) {
    var p = parentOf(root, path);
    if (Array.isArray(p.node)) p.node.splice(Number(p.key), 1);
    else delete p.node[p.key];
  }

  // The SSE body: frames end with a blank line; the data lines of a frame are joined with newlines;
  // its id: line (the broker's cursor) comes along, for Last-Event-ID.
  function readSSE(body, onFrame) {
    var reader = body.getReader(), decoder = new TextDecoder(), buffer = '';
    function dispatch(frame) {
      var data = [], id = null;
      frame.split(/\r\n|\r|\n/).forEach(function (line) {
        if (line.slice(0, 5) === 'data:') data.push(line.charAt(5) === ' ' ? line.slice(6) : line.slice(5));
        else if (line.slice(0, 3) === 'id:') id = line.charAt(3) === ' ' ? line.slice(4) : line.slice(3);
      });
      if (data.length) onFrame(data.join('\n'), id);
    }
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) { buffer += decoder.decode(); if (buffer.trim()) dispatch(buffer); return; }
        buffer += decoder.decode(chunk.value, { stream: true });
        var match;
        while ((match = /\r\n\r\n|\n\n|\r\r/.exec(buffer))) {
          var frame = buffer.slice(0, match.index);
          buffer = buffer.slice(match.index + match[0].length);
          dispatch(frame);
        }
        return pump();
      });
    }
    return pump();
  }

  function runPath(run) {
    return config.endpoint + '/threads/' + encodeURIComponent(threadId) + '/runs/' + encodeURIComponent(run.runId);
  }

  function httpError(response) {
    return response.text().then(function (body) {
      var reason = body;
      try { reason = JSON.parse(body).error || body; } catch (e) { /* not JSON: show it as it is */ }
      var error = new Error('HTTP ' + response.status + ': ' + reason);
      error.status = response.status;
      throw error;
    });
  }

  function postJSON(path, input) {
    return fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: JSON.stringify(input) });
  }

  function busy(on) {
    sendEl.disabled = on;
    stopEl.hidden = !on;
    stopEl.disabled = false;
    if (!on) inputEl.focus();
  }

  function send() {
    var text = inputEl.value.trim();
    if (!text || active || sendEl.disabled) return;
    inputEl.value = '';
    autosize();
    var userMessage = { id: newId('msg'), role: 'user', content: text };
    history.push(userMessage);
    append(el('div', 'msg user', text));
    var input = { threadId: threadId, runId: newId('run'), state: state, messages: history.slice(), tools: [], context: [] };
    follow(function () { return postJSON(config.endpoint, input); }, beginRun(input.runId, false));
  }

  // After a reload: POST connect rebuilds the thread (finished runs come compacted, without ids),
  // then streams its running run, if any, from its start.
  function connectThread() {
    sendEl.disabled = true;
    setStatus('running', 'restoring');
    var input = { threadId: threadId, runId: newId('connect'), state: {}, messages: [], tools: [], context: [] };
    follow(function () { return postJSON(config.endpoint + '/connect', input); }, null).then(function () {
      if (!active) { sendEl.disabled = false; if ($('status').getAttribute('data-status') === 'running') setStatus('idle'); }
    });
  }

  // Stop asks the server to cancel the run (wherever it runs); the stream then ends with RUN_FINISHED cancelled.
  function stop() {
    var run = active;
    if (!run || run.stopping) return;
    run.stopping = true;
    stopEl.disabled = true;
    setStatus('running', 'stopping…');
    fetch(runPath(run) + '/stop', { method: 'POST', headers: { 'Content-Type': 'application/json' } }).then(function (response) {
      if (response.status !== 202) return httpError(response);
    }).catch(function (error) {
      run.stopping = false;
      stopEl.disabled = false;
      if (!run.done) run.view.notice('error', 'Could not stop the run: ' + error.message);
    });
  }

  function beginRun(runId, restoring) {
    var run = { runId: runId, view: newRunView(runId, restoring), lastId: null, done: false, stopping: false };
    if (!restoring) {
      active = run;
      busy(true);
      setStatus('running', 'streaming');
    }
    return run;
  }

  function finishRun(run, error) {
    if (run.done) return;
    run.done = true;
    run.view.end(error);
    if (active === run) { active = null; busy(false); }
  }

  // The pause before resume attempt n (1, 2, …): exponential from 250 ms up to 4 s, with ±25% jitter.
  function backoff(attempt) {
    return Math.min(4000, 250 * Math.pow(2, attempt - 1)) * (0.75 + Math.random() * 0.5);
  }

  // Follows a broker stream: open() makes the first request; each RUN_STARTED that comes while no run
  // is followed opens one (a restored history has no ids; a live run has). When the stream breaks
  // before the run's terminal event, it resumes with GET .../events and Last-Event-ID (the last id:
  // seen), with bounded retries and backoff, so that nothing is shown twice and nothing is missed.
  function follow(open, current) {
    var attempts = 0;
    function onFrame(data, id) {
      try {
        var event = JSON.parse(data);
        if (event.type === 'RUN_STARTED' && (!current || current.done)) current = beginRun(event.runId, !id);
        if (!current) return;
        if (attempts > 0) { attempts = 0; current.view.resumed(current.lastId); }
        if (id) current.lastId = id;
        current.view.onEvent(event);
        if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') finishRun(current, null);
      } catch (error) {
        // A frame the page cannot show: not a network failure, so no resuming.
        error.fatal = true;
        throw error;
      }
    }
    function attempt(request) {
      return request().then(function (response) {
        if (!response.ok) return httpError(response);
        return readSSE(response.body, onFrame);
      }).then(function () { return null; }, function (error) { return error; }).then(function (error) {
        if (!current) {
          if (error) notice('error', 'Could not restore the conversation: ' + error.message);
          return;
        }
        if (current.done) return;
        // Refused (404: the run is gone, 403 …) or broken beyond repair: no retry.
        if (error && (error.fatal || (error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429))) return finishRun(current, error);
        if (attempts >= MAX_RESUME_ATTEMPTS) {
          return finishRun(current, new Error('The stream broke and ' + MAX_RESUME_ATTEMPTS + ' attempts to resume it failed' + (error ? ' (the last: ' + error.message + ')' : '') + '. The run may still be going on the server: reload the page to follow it.'));
        }
        attempts++;
        var run = current;
        run.view.reconnecting(attempts, error);
        return new Promise(function (resolve) { setTimeout(resolve, backoff(attempts)); }).then(function () {
          return attempt(function () {
            var headers = { Accept: 'text/event-stream' };
            if (run.lastId) headers['Last-Event-ID'] = run.lastId;
            return fetch(runPath(run) + '/events', { headers: headers });
          });
        });
      });
    }
    return attempt(open);
  }

  function notice(kind, text) {
    return append(el('div', 'notice ' + kind, text));
  }

  // A message of a rebuilt conversation (MESSAGES_SNAPSHOT, or a run's input), drawn as it would have streamed.
  function renderMessage(message) {
    if (message.role === 'user') {
      append(el('div', 'msg user', textOf(message.content)));
    } else if (message.role === 'assistant') {
      if (message.content) {
        var node = append(el('div', 'msg assistant'));
        node.setAttribute('data-message-id', message.id);
        node.appendChild(el('div', 'who', 'assistant'));
        node.appendChild(el('span', 'text', textOf(message.content)));
      }
      if (message.toolCalls && message.toolCalls.length) {
        var group = append(el('div', 'tool-group'));
        message.toolCalls.forEach(function (call) {
          var card = toolCard(group, call.id, call.function.name);
          card.args.textContent = pretty(call.function.arguments);
          card.card.setAttribute('data-status', 'pending');
          card.badge.textContent = 'no result';
        });
      }
    } else if (message.role === 'tool') {
      if (cards[message.toolCallId]) showResult(cards[message.toolCallId], message.content, 'done');
    } else if (message.role === 'reasoning') {
      var details = append(el('details', 'msg reasoning'));
      details.appendChild(el('summary', null, 'reasoning'));
      details.appendChild(el('span', 'text', textOf(message.content)));
    }
  }
  function textOf(content) {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) return content.map(function (part) { return part && part.type === 'text' ? part.text : ''; }).join('');
    return content === undefined || content === null ? '' : JSON.stringify(content);
  }
  // Adds the messages that history does not hold yet (by id), drawing each.
  function addMessages(messages) {
    var known = {};
    history.forEach(function (message) { known[message.id] = true; });
    messages.forEach(function (message) {
      if (known[message.id]) return;
      known[message.id] = true;
      history.push(message);
      renderMessage(message);
    });
  }

  function toolCard(group, id, name) {
    var card = group.appendChild(el('div', 'tool-call'));
    card.setAttribute('data-tool-call-id', id);
    card.setAttribute('data-name', name);
    card.setAttribute('data-status', 'streaming');
    var header = card.appendChild(el('header'));
    header.appendChild(el('span', 'name', name));
    var badge = header.appendChild(el('span', 'badge', 'calling…'));
    var argsSection = card.appendChild(el('div', 'section'));
    argsSection.appendChild(el('div', 'label', 'arguments'));
    var args = argsSection.appendChild(el('pre', 'args'));
    cards[id] = { card: card, badge: badge, args: args, started: performance.now() };
    return cards[id];
  }
  function showResult(entry, content, badgeText) {
    var resultSection = entry.card.appendChild(el('div', 'section'));
    resultSection.appendChild(el('div', 'label', 'result'));
    resultSection.appendChild(el('pre', 'result', pretty(typeof content === 'string' ? content : JSON.stringify(content))));
    entry.card.setAttribute('data-status', 'done');
    entry.badge.textContent = badgeText;
  }

  // One run's rendering: its messages, tool calls, reasoning and the run panel. A restoring view
  // draws a rebuilt history (connect's compacted runs) rather than a live run.
  function newRunView(runId, restoring) {
    var started = performance.now(), count = 0, terminal = null, reconnectNotice = null, restoredMessages = 0;
    var texts = {}, reasonings = {}, calls = {}, group = null;
    // The count of the last event that was not a closer: what came after it is the run's own closing.
    var lastWork = 0;
    $('run-id').textContent = runId;
    $('run-events').textContent = '0';
    $('run-time').textContent = '–';
    $('run-usage').textContent = '–';
    $('run-outcome').textContent = restoring ? 'restoring' : 'running';

    function elapsed() { return ((performance.now() - started) / 1000).toFixed(1) + ' s'; }
    function findMessage(id) { for (var i = history.length - 1; i >= 0; i--) if (history[i].id === id) return history[i]; return null; }
    function assistantMessage(id) {
      var message = findMessage(id);
      if (!message) { message = { id: id, role: 'assistant' }; history.push(message); }
      return message;
    }
    function log(event) {
      var kind = /^RUN_ERROR/.test(event.type) ? 'error' : /^RUN|^STEP/.test(event.type) ? 'run' : /^TOOL/.test(event.type) ? 'tool'
        : /^STATE|^MESSAGES/.test(event.type) ? 'state' : /^REASONING/.test(event.type) ? 'reasoning' : 'text';
      var detail = event.delta !== undefined ? JSON.stringify(event.delta) : event.content !== undefined ? JSON.stringify(event.content)
        : event.snapshot !== undefined ? JSON.stringify(event.snapshot) : event.toolCallName || event.message || event.role || '';
      var item = el('li');
      item.appendChild(el('span', 't', Math.round(performance.now() - started) + 'ms'));
      item.appendChild(el('span', 'type k-' + kind, event.type));
      item.appendChild(el('span', 'detail', detail));
      logLine(item);
    }
    function logLine(item) {
      var list = $('log');
      list.appendChild(item);
      while (list.childNodes.length > 500) list.removeChild(list.firstChild);
      followLog();
    }
    logLine(el('li', 'run-mark', (restoring ? 'restored · ' : '') + runId));

    function onEvent(event) {
      count++;
      if (!/_END$|^RUN_FINISHED$|^RUN_ERROR$/.test(event.type)) lastWork = count;
      $('run-events').textContent = String(count);
      $('run-time').textContent = elapsed();
      log(event);
      switch (event.type) {
        case 'RUN_STARTED':
          // The run's input echoed: the turns it adds (the user's message) appear once, even after a reload.
          if (event.input && Array.isArray(event.input.messages)) addMessages(event.input.messages);
          break;
        case 'TEXT_MESSAGE_START': {
          group = null;
          var message = assistantMessage(event.messageId);
          message.content = message.content || '';
          var node = append(el('div', 'msg assistant streaming'));
          node.setAttribute('data-message-id', event.messageId);
          node.appendChild(el('div', 'who', 'assistant'));
          texts[event.messageId] = { node: node, text: node.appendChild(el('span', 'text')) };
          break;
        }
        case 'TEXT_MESSAGE_CONTENT': {
          var entry = texts[event.messageId];
          var target = findMessage(event.messageId);
          if (target) target.content = (target.content || '') + event.delta;
          if (entry) entry.text.textContent += event.delta;
          break;
        }
        case 'TEXT_MESSAGE_END':
          if (texts[event.messageId]) texts[event.messageId].node.classList.remove('streaming');
          break;
        case 'REASONING_MESSAGE_START': {
          group = null;
          var details = append(el('details', 'msg reasoning streaming'));
          details.open = true;
          var summary = details.appendChild(el('summary', null, 'reasoning…'));
          reasonings[event.messageId] = { node: details, summary: summary, text: details.appendChild(el('span', 'text')), started: performance.now() };
          break;
        }
        case 'REASONING_MESSAGE_CONTENT':
          if (reasonings[event.messageId]) reasonings[event.messageId].text.textContent += event.delta;
          break;
        case 'REASONING_MESSAGE_END': {
          var r = reasonings[event.messageId];
          if (r) {
            r.ended = count;
            r.node.classList.remove('streaming');
            r.summary.textContent = 'reasoned for ' + ((performance.now() - r.started) / 1000).toFixed(1) + ' s';
          }
          break;
        }
        case 'TOOL_CALL_START': {
          var parentId = event.parentMessageId || newId('msg');
          var parent = assistantMessage(parentId);
          parent.toolCalls = parent.toolCalls || [];
          var call = { id: event.toolCallId, type: 'function', function: { name: event.toolCallName, arguments: '' } };
          parent.toolCalls.push(call);
          if (!group) group = append(el('div', 'tool-group'));
          calls[event.toolCallId] = toolCard(group, event.toolCallId, event.toolCallName);
          calls[event.toolCallId].call = call;
          break;
        }
        case 'TOOL_CALL_ARGS': {
          var c = calls[event.toolCallId];
          if (c) { c.call.function.arguments += event.delta; c.args.textContent = c.call.function.arguments; }
          break;
        }
        case 'TOOL_CALL_END': {
          var ended = calls[event.toolCallId];
          if (ended) {
            ended.args.textContent = pretty(ended.call.function.arguments);
            ended.card.setAttribute('data-status', 'running');
          }
          break;
        }
        case 'TOOL_CALL_RESULT': {
          history.push({ id: event.messageId, role: 'tool', toolCallId: event.toolCallId, content: event.content });
          var done = calls[event.toolCallId];
          if (done) showResult(done, event.content, 'done in ' + ((performance.now() - done.started) / 1000).toFixed(1) + ' s');
          break;
        }
        case 'STATE_SNAPSHOT':
          state = event.snapshot;
          showState();
          break;
        case 'STATE_DELTA':
          state = applyPatch(state, event.delta);
          showState();
          break;
        case 'MESSAGES_SNAPSHOT':
          // What is new is drawn (all of it, for a rebuilt thread); the snapshot is the conversation from now on.
          restoredMessages = event.messages.length;
          addMessages(event.messages);
          history = event.messages.slice();
          break;
        case 'RUN_FINISHED':
        case 'RUN_ERROR':
          terminal = event;
          break;
        default:
          // Steps, activity, custom and raw events appear in the event log only.
          break;
      }
      followMessages();
    }

    // The stream broke mid-run: say so while the page resumes it.
    function reconnecting(attempt, error) {
      setStatus('reconnecting', 'reconnecting…');
      var text = 'Connection lost: reconnecting…' + (attempt > 1 ? ' (attempt ' + attempt + ' of ' + MAX_RESUME_ATTEMPTS + ')' : '');
      if (reconnectNotice) reconnectNotice.textContent = text;
      else reconnectNotice = notice('reconnect', text);
      logLine(el('li', 'run-mark', 'reconnecting… (attempt ' + attempt + (error ? ': ' + error.message : '') + ')'));
    }
    function resumed(lastId) {
      setStatus('running', 'streaming');
      var text = lastId ? 'Reconnected: resumed after event ' + lastId + ' (Last-Event-ID).' : 'Reconnected: the run was read again from its start.';
      if (reconnectNotice) reconnectNotice.textContent = text;
      reconnectNotice = null;
      logLine(el('li', 'run-mark', text));
    }

    // Reasoning the run's end cut short (no REASONING_MESSAGE_END, or one sent only to close it as
    // the run stopped): its label says so rather than "reasoning…" or "reasoned for".
    function settleReasoning(label, closedByEnd) {
      Object.keys(reasonings).forEach(function (id) {
        var r = reasonings[id];
        r.node.classList.remove('streaming');
        if (!r.ended || (closedByEnd && r.ended > lastWork)) r.summary.textContent = label;
      });
    }

    function end(error) {
      $('run-time').textContent = elapsed();
      if (restoring && !error) {
        settleReasoning('reasoning');
        $('run-outcome').textContent = 'restored';
        setStatus('finished', 'restored');
        append(el('div', 'run-summary', 'restored · ' + restoredMessages + ' messages'));
        return;
      }
      Object.keys(texts).forEach(function (id) { texts[id].node.classList.remove('streaming'); });
      var usage = terminal && terminal.usage ? terminal.usage : [];
      var tokens = usage.reduce(function (sum, u) { return sum + (u.totalTokens || (u.inputTokens || 0) + (u.outputTokens || 0)); }, 0);
      if (tokens) $('run-usage').textContent = tokens + ' (' + usage.map(function (u) { return u.model || u.provider || '?'; }).join(', ') + ')';
      var pending = terminal && terminal.outcome && terminal.outcome.pendingToolCallIds ? terminal.outcome.pendingToolCallIds : [];
      pending.forEach(function (id) {
        var c = calls[id];
        if (c) { c.card.setAttribute('data-status', 'pending'); c.badge.textContent = 'left for the client'; }
      });
      var outcome, status;
      if (error && error.name === 'AbortError') {
        outcome = 'stopped'; status = 'cancelled';
        append(el('div', 'notice cancelled', 'Stopped: the request was aborted.'));
      } else if (error) {
        outcome = 'error'; status = 'error';
        append(el('div', 'notice error', 'Request failed: ' + error.message));
      } else if (!terminal) {
        outcome = 'error'; status = 'error';
        append(el('div', 'notice error', 'The stream ended without RUN_FINISHED or RUN_ERROR.'));
      } else if (terminal.type === 'RUN_ERROR') {
        outcome = 'error'; status = 'error';
        append(el('div', 'notice error', 'RUN_ERROR' + (terminal.code ? ' (' + terminal.code + ')' : '') + ': ' + terminal.message));
      } else {
        outcome = terminal.outcome && terminal.outcome.type ? terminal.outcome.type : 'success';
        status = outcome === 'cancelled' ? 'cancelled' : 'finished';
        if (outcome === 'cancelled') append(el('div', 'notice cancelled', 'Stopped: the server cancelled the run, which ended with RUN_FINISHED (outcome cancelled).'));
      }
      settleReasoning(status === 'cancelled' ? 'reasoning stopped' : status === 'error' ? 'reasoning cut off' : 'reasoning', status !== 'finished');
      Object.keys(calls).forEach(function (id) {
        var c = calls[id];
        if (c.card.getAttribute('data-status') === 'running' || c.card.getAttribute('data-status') === 'streaming') {
          c.card.setAttribute('data-status', 'pending');
          c.badge.textContent = 'no result';
        }
      });
      $('run-outcome').textContent = outcome;
      setStatus(status, status === 'finished' ? 'finished' : status);
      append(el('div', 'run-summary', outcome + ' · ' + count + ' events · ' + elapsed() + (tokens ? ' · ' + tokens + ' tokens' : '')));
    }

    return { onEvent: onEvent, end: end, reconnecting: reconnecting, resumed: resumed, notice: notice };
  }
})();
`;
