import type { Event } from '@ag-ui/core';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { from } from 'rxjs';
import { runWithOracle } from '../../support/oracle.js';

/** The built bin (`npm test` builds before jest; during development run `npm run build`). */
const cli = resolve(__dirname, '../../../dist/cjs/lib/cli/index.js');

let dir: string;
beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'npm run build' first ('npm test' does).`);
  dir = mkdtempSync(join(tmpdir(), 'agui-rx-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `agui-rx <args>` with `input` on stdin. */
function run(args: string[], input = '') {
  const { status, stdout, stderr } = spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8', timeout: 20000 });
  return { status, stdout, stderr };
}

/** Writes a temp file and returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The events of SSE text as agui-rx writes it (`data: <json>\n\n` frames). */
function sseEvents(text: string): Record<string, unknown>[] {
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      expect(frame.startsWith('data: ')).toBe(true);
      return JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>;
    });
}

const sse = (events: readonly object[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');
const jsonl = (events: readonly object[]) => events.map((event) => JSON.stringify(event)).join('\n') + '\n';

const good = [
  { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
  { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hello' },
  { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
  { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
];

const broken = [
  { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hello' },
  { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'search' },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"q":"rxjs"}' },
];

const brokenReport = [
  `#1 TEXT_MESSAGE_CONTENT: TEXT_MESSAGE_CONTENT for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END. [content-without-start]`,
  `#4 (end of stream): The stream ended during run 'r1' (started at #0) without RUN_FINISHED or RUN_ERROR. End every run with one of them. [no-terminal-event, warning]`,
  `#4 (end of stream): The stream ended while tool call 'c1' is still open. End it with TOOL_CALL_END, then end the run. [open-at-end, warning]`,
];

// A small OpenAI chat completions stream: text, then one tool call in three pieces, usage, [DONE].
const chunk = (delta: object, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const openAIChunks = [
  chunk({ role: 'assistant', content: 'Hel' }),
  chunk({ content: 'lo' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({}, 'tool_calls'),
  { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } },
];

describe('agui-rx (the CLI)', () => {
  describe('verify', () => {
    it('should pass a good SSE capture with exit code 0', () => {
      const path = file('good.sse', sse(good));
      expect(run(['verify', path])).toEqual({ status: 0, stdout: `${path}: 5 events, no violations.\n`, stderr: '' });
    });

    it('should read a JSON array with a UTF-8 BOM and recorder fields', () => {
      const path = file('good.json', '\uFEFF' + JSON.stringify(good.map((event, index) => ({ ...event, _index: index }))));
      expect(run(['verify', path])).toEqual({ status: 0, stdout: `${path}: 5 events, no violations.\n`, stderr: '' });
    });

    it('should read JSON lines with recorder fields', () => {
      const path = file('good.jsonl', jsonl(good.map((event) => ({ ...event, _timestamp: 1700000000, _offset_ms: 3 }))));
      expect(run(['verify', path])).toEqual({ status: 0, stdout: `${path}: 5 events, no violations.\n`, stderr: '' });
    });

    it('should read the capture from stdin for -', () => {
      expect(run(['verify', '-'], sse(good))).toEqual({ status: 0, stdout: 'stdin: 5 events, no violations.\n', stderr: '' });
    });

    it.each([
      ['SSE', 'broken.sse', sse(broken)],
      ['a JSON array', 'broken.json', JSON.stringify(broken, null, 2)],
      ['JSON lines', 'broken.jsonl', jsonl(broken)],
    ])('should report each violation of a broken capture in %s, and exit 1', (_format, name, text) => {
      const path = file(name, text);
      expect(run(['verify', path])).toEqual({
        status: 1,
        stdout: [...brokenReport, `${path}: 4 events, 1 violation, 2 warnings.`].join('\n') + '\n',
        stderr: '',
      });
    });

    it('should print a stream the official client accepts with --fix, keeping the capture ids', async () => {
      const path = file('fixable.sse', sse(broken));
      const { status, stdout, stderr } = run(['verify', path, '--fix']);
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      const events = sseEvents(stdout);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 't1', runId: 'r1' });
      expect(events[events.length - 1]).toMatchObject({ type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' });
      const oracle = await runWithOracle(from(events as unknown as Event[]));
      const assistant = oracle.messages.filter((message) => message.role === 'assistant');
      expect(assistant.map((message) => message.content ?? '').join('')).toBe('Hello');
      expect(assistant.flatMap((message) => message.toolCalls ?? [])).toEqual([{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"rxjs"}' } }]);
      // And the repaired stream verifies clean.
      expect(run(['verify', '-'], stdout).status).toBe(0);
    });

    it('should keep a tool call\'s arguments whole with --fix when step events come between its fragments (LangGraph)', async () => {
      const path = resolve(__dirname, '../../fixtures/ag-ui/langgraph-steps-between-args.agui.jsonl');
      const { status, stdout } = run(['verify', '--fix', path]);
      expect(status).toBe(0);
      const oracle = await runWithOracle(from(sseEvents(stdout) as unknown as Event[]), { runId: 'run-lg-1' });
      const calls = oracle.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
      expect(calls.map((call) => [call.id, call.function.arguments])).toEqual([
        ['call_calc_01', '{"expression": "42 * 7"}'],
        ['call_time_02', '{"timezone": "UTC"}'],
      ]);
      // And the repaired stream verifies clean.
      expect(run(['verify', '-'], stdout).status).toBe(0);
    });

    it('should repair a snake_case capture with --fix, keeping its ids, text, calls and results', async () => {
      const path = resolve(__dirname, '../../fixtures/ag-ui-python/snake-case-run.jsonl');
      expect(run(['verify', path]).status).toBe(1);
      const { status, stdout, stderr } = run(['verify', '--fix', path]);
      expect(status).toBe(0);
      // One diagnostic for the names, one per null field: the run itself is kept.
      expect(stderr.split('\n').filter((line) => line.includes("names its fields in snake_case ('"))).toHaveLength(1);
      const events = sseEvents(stdout);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-py', runId: 'run-py' });
      expect(events[events.length - 1]).toMatchObject({ type: 'RUN_FINISHED', threadId: 'thread-py', runId: 'run-py' });
      // AG-UI's names and no null on every event; the state, a payload, keeps its own keys.
      for (const event of events) expect(Object.entries(event).filter(([key, value]) => key.includes('_') || value === null)).toEqual([]);
      expect(events.find((event) => event.type === 'STATE_SNAPSHOT')?.snapshot).toEqual({ last_city: 'Paris', user_id: null, tool_calls: 1 });
      // The snapshot is left out so that the client's messages are those the deltas built.
      const streamed = events.filter((event) => event.type !== 'MESSAGES_SNAPSHOT');
      const oracle = await runWithOracle(from(streamed as unknown as Event[]), { runId: 'run-py' });
      expect(oracle.messages).toEqual([
        {
          id: 'msg-1',
          role: 'assistant',
          content: 'Let me look up the weather.',
          toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'get_weather', arguments: '{"city_name":"Paris","unit":null}' } }],
        },
        { id: 'tool-1', role: 'tool', toolCallId: 'call-1', content: '{"temp_c":18,"sky":"cloudy","station_id":"LFPG"}' },
        { id: 'msg-2', role: 'assistant', content: 'It is 18°C in Paris.' },
      ]);
      expect(run(['verify', '-'], stdout).status).toBe(0);
    });

    it('should leave out what is not an event with --fix, and say so on stderr', async () => {
      const path = file('junk.jsonl', jsonl([good[0], { kind: 'PROGRESS_UPDATE' }, ...good.slice(1)]));
      const { status, stdout, stderr } = run(['verify', '--fix', path]);
      expect({ status, stderr }).toEqual({ status: 0, stderr: 'agui-rx: verify --fix left out 1 record that is not an AG-UI event: #1.\n' });
      await expect(runWithOracle(from(sseEvents(stdout) as unknown as Event[]))).resolves.toMatchObject({ messages: [expect.objectContaining({ content: 'Hello' })] });
    });

    // AG-UI spec 1.1, Processing Model: an event of an unrecognised type is dropped with a warning; the run goes on.
    const tolerated = [good[0], good[1], { type: 'PROGRESS_UPDATE', percent: 50 }, good[2], { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: ', world' }, good[3], { ...good[4], outcome: { type: 'handoff' } }];

    it('should report what the specification tolerates as warnings, exit 0, and exit 1 with --strict', () => {
      const path = file('tolerated.jsonl', jsonl(tolerated));
      const report = [
        `#2 PROGRESS_UPDATE: 'PROGRESS_UPDATE' is not an AG-UI 1.0 event type: a consumer drops it with a warning (AG-UI spec 1.1, Processing Model). Send one of the EventType values of @ag-ui/core, or carry other data in a CUSTOM or RAW event. [unknown-type, warning]`,
        expect.stringMatching(/^#6 RUN_FINISHED: RUN_FINISHED: at \/outcome, the outcome of type 'handoff', which AG-UI does not describe, was removed .* \[unknown-outcome, warning\]$/),
        `${path}: 7 events, no violations, 2 warnings.`,
        '',
      ];
      const plain = run(['verify', path]);
      expect({ ...plain, stdout: plain.stdout.split('\n') }).toEqual({ status: 0, stdout: report, stderr: '' });
      const strict = run(['verify', '--strict', path]);
      expect({ ...strict, stdout: strict.stdout.split('\n') }).toEqual({ status: 1, stdout: report, stderr: '' });
      expect(run(['verify', '--strict', file('strict-good.jsonl', jsonl(good))]).status).toBe(0);
    });

    it('should drop an unknown event type and strip an unknown outcome with --fix, keeping the text around them, and say so on stderr', async () => {
      const path = file('tolerated-fix.jsonl', jsonl(tolerated));
      const { status, stdout, stderr } = run(['verify', '--fix', path]);
      expect(status).toBe(0);
      expect(stderr.split('\n').filter((line) => line !== '')).toEqual([
        expect.stringMatching(/^\[agui-rx\] Dropped an event of unknown type 'PROGRESS_UPDATE'/),
        expect.stringMatching(/^\[agui-rx\] Stripped what AG-UI does not describe from RUN_FINISHED: at \/outcome/),
      ]);
      const oracle = await runWithOracle(from(sseEvents(stdout) as unknown as Event[]));
      expect(oracle.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hello, world' }]);
      expect(run(['verify', '--strict', '-'], stdout).status).toBe(0);
    });

    it('should repair each run of a multi-run capture with --fix, ending a run the next one interrupts', () => {
      const second = good.map((event) => ('runId' in event ? { ...event, runId: 'r2' } : event));
      const path = file('two-runs.jsonl', jsonl([...good.slice(0, 4), ...second]));
      expect(run(['verify', path]).stdout).toContain('[run-already-started]');
      const { status, stdout } = run(['verify', '--fix', path]);
      expect(status).toBe(0);
      const runs = sseEvents(stdout).filter((event) => event.type === 'RUN_STARTED' || event.type === 'RUN_FINISHED');
      expect(runs.map((event) => [event.type, event.runId])).toEqual([
        ['RUN_STARTED', 'r1'],
        ['RUN_FINISHED', 'r1'],
        ['RUN_STARTED', 'r2'],
        ['RUN_FINISHED', 'r2'],
      ]);
      expect(run(['verify', '-'], stdout).status).toBe(0);
    });
    it('should print events after a run\'s end without a RUN_STARTED as a run of their own, and leave out trailing closers, saying so on stderr', async () => {
      const path = file('after-end.jsonl', jsonl([
        ...good,
        { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
        { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
        ...good.map((event) => ('runId' in event ? { ...event, runId: 'r2' } : event)).slice(0, 3),
        { type: 'RUN_FINISHED', threadId: 't1', runId: 'r2' },
        { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm3', delta: 'After.' },
      ]));
      const { status, stdout, stderr } = run(['verify', '--fix', path]);
      expect({ status, stderr }).toEqual({
        status: 0,
        stderr: [
          'agui-rx: verify --fix left out #5–#6: after the run\'s RUN_FINISHED or RUN_ERROR they only close what that run already closed.',
          'agui-rx: verify --fix printed #11 as a run of their own: they come after the run\'s RUN_FINISHED or RUN_ERROR without a RUN_STARTED.',
          '',
        ].join('\n'),
      });
      const events = sseEvents(stdout);
      expect(events.filter((event) => event.type === 'RUN_STARTED').map((event) => event.runId)).toEqual(['r1', 'r2', expect.any(String)]);
      expect(run(['verify', '-'], stdout).status).toBe(0);
      const texts = events.filter((event) => event.type === 'TEXT_MESSAGE_CONTENT').map((event) => event.delta);
      expect(texts).toEqual(['Hello', 'Hello', 'After.']);
    });

    it('should exit 1 with --fix when a run it could not repair ends with RUN_ERROR, and 0 when the capture itself failed the run', async () => {
      const cut = file('cut-call.jsonl', jsonl([
        { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
        { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'search' },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"q": "tra' },
        { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
      ]));
      const repaired = run(['verify', '--fix', cut]);
      expect(repaired.status).toBe(1);
      expect(repaired.stderr).toMatch(/^agui-rx: verify --fix could not repair run 'r1': it ends with RUN_ERROR: The run ended with tool call 'c1' \(search, arguments ending "\{\\"q\\": \\"tra"\) waiting for a result/);
      const events = sseEvents(repaired.stdout);
      expect(events[events.length - 1]).toMatchObject({ type: 'RUN_ERROR', code: 'INCOMPLETE_STREAM' });
      expect(run(['verify', '-'], repaired.stdout).status).toBe(0);

      const failed = file('failed-run.jsonl', jsonl([...good.slice(0, 3), { type: 'RUN_ERROR', message: 'model overloaded' }]));
      const kept = run(['verify', '--fix', failed]);
      expect({ status: kept.status, stderr: kept.stderr }).toEqual({ status: 0, stderr: '' });
      expect(sseEvents(kept.stdout).pop()).toMatchObject({ type: 'RUN_ERROR', message: 'model overloaded' });
    });
  });

  describe('convert', () => {
    it('should print an OpenAI chat completions recording as AG-UI SSE the official client accepts', async () => {
      const path = file('openai.sse', sse(openAIChunks) + 'data: [DONE]\n\n');
      const { status, stdout, stderr } = run(['convert', '--from', 'openai-chat', path, '--thread-id', 'thread-9', '--run-id', 'run-9']);
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      const events = sseEvents(stdout);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-9', runId: 'run-9' });
      expect(events[events.length - 1]).toMatchObject({ type: 'RUN_FINISHED', threadId: 'thread-9', runId: 'run-9', usage: [{ inputTokens: 12, outputTokens: 9, totalTokens: 21, model: 'gpt-4o' }] });
      const oracle = await runWithOracle(from(events as unknown as Event[]));
      expect(oracle.messages).toEqual([
        expect.objectContaining({
          id: 'chatcmpl-1',
          role: 'assistant',
          content: 'Hello',
          toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        }),
      ]);
      expect(run(['verify', '-'], stdout)).toMatchObject({ status: 0 });
    });

    it('should read JSON lines, and stdin for -', () => {
      const path = file('openai.jsonl', jsonl(openAIChunks));
      const fromFile = run(['convert', '--from', 'openai-chat', path, '--thread-id', 't', '--run-id', 'r']);
      const fromStdin = run(['convert', '--from', 'openai-chat', '-', '--thread-id', 't', '--run-id', 'r'], sse(openAIChunks));
      expect(fromFile.status).toBe(0);
      expect(fromStdin).toEqual(fromFile);
    });

    it('should generate the run ids when none are given', () => {
      const { status, stdout } = run(['convert', '--from', 'openai-chat', file('ids.jsonl', jsonl(openAIChunks))]);
      expect(status).toBe(0);
      expect(sseEvents(stdout)[0]).toMatchObject({ type: 'RUN_STARTED', threadId: expect.stringMatching(/^[\w-]{21}$/), runId: expect.stringMatching(/^[\w-]{21}$/) });
    });
  });

  describe('bad usage and bad input', () => {
    it.each([[['--help']], [['-h']], [['help']]])('should print the usage on stdout and exit 0 for %j', (args) => {
      const { status, stdout, stderr } = run(args);
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      expect(stdout).toMatch(/^Usage: agui-rx <command> \[options\]\n/);
      expect(stdout).toContain('verify <capture> [--fix]');
    });

    it('should print the usage on stderr and exit 2 without a command', () => {
      const { status, stdout, stderr } = run([]);
      expect({ status, stdout }).toEqual({ status: 2, stdout: '' });
      expect(stderr).toMatch(/^Usage: agui-rx <command> \[options\]\n/);
    });

    it('should name an unknown command, print the usage and exit 2', () => {
      const { status, stdout, stderr } = run(['lint', 'x']);
      expect({ status, stdout }).toEqual({ status: 2, stdout: '' });
      expect(stderr).toMatch(/^agui-rx: unknown command 'lint'\.\nUsage: agui-rx/);
    });

    it.each([
      [['verify'], `agui-rx: verify takes one capture (a path, or - for stdin), got none. Run 'agui-rx --help' for the usage.\n`],
      [['verify', 'a.json', 'b.json'], `agui-rx: verify takes one capture (a path, or - for stdin), got 'a.json' 'b.json'. Run 'agui-rx --help' for the usage.\n`],
      [['verify', '--lenient', 'a.json'], `agui-rx: verify: Unknown option '--lenient'. Run 'agui-rx --help' for the usage.\n`],
      [['convert', 'a.sse'], `agui-rx: convert needs --from with the provider format of the recording: one of openai-chat, openai-responses, anthropic, ai-sdk, langchain, langgraph. Run 'agui-rx --help' for the usage.\n`],
      [['convert', '--from', 'gemini', 'a.sse'], `agui-rx: convert needs --from with the provider format of the recording: one of openai-chat, openai-responses, anthropic, ai-sdk, langchain, langgraph; got 'gemini'. Run 'agui-rx --help' for the usage.\n`],
    ])('should explain bad arguments %j in one line and exit 2', (args, message) => {
      expect(run(args)).toEqual({ status: 2, stdout: '', stderr: message });
    });

    it('should say which file is missing and exit 2', () => {
      const path = join(dir, 'nowhere.sse');
      expect(run(['verify', path])).toEqual({ status: 2, stdout: '', stderr: `agui-rx: cannot read ${path}: no such file.\n` });
    });

    it('should say where a capture is not JSON and exit 2', () => {
      const lines = file('bad.jsonl', `${JSON.stringify(good[0])}\n{"type": "TEXT_MESSAGE_START",\n`);
      expect(run(['verify', lines])).toMatchObject({ status: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^agui-rx: ${lines}: line 2 is not JSON \\(.+\\)\\.\\n$`)) });
      const frames = file('bad.sse', `data: ${JSON.stringify(good[0])}\n\ndata: {oops}\n\n`);
      expect(run(['verify', frames])).toMatchObject({ status: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^agui-rx: ${frames}: SSE event 2 is not JSON \\(.+\\)\\.\\n$`)) });
      const object = file('object.json', '[1, 2');
      expect(run(['verify', object])).toMatchObject({ status: 2, stderr: expect.stringMatching(/the capture is not JSON/) });
    });
  });

  describe('terminal escapes in the input', () => {
    // ESC [2J clears the screen, ESC ]0;… BEL retitles the window, CSI (U+009B) starts a sequence on some terminals.
    const controls = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

    it('should escape control characters of a capture that is not JSON in its error message', () => {
      const { status, stdout, stderr } = run(['verify', '-'], 'data: \u001b[31mred\u0007\n\n');
      expect({ status, stdout }).toEqual({ status: 2, stdout: '' });
      expect(stderr).not.toMatch(controls);
      expect(stderr).toMatch(/^agui-rx: stdin: SSE event 1 is not JSON \(.*\\x1b\[31mred\\x07.*\)\.\n$/);
    });

    it("should escape control characters of a capture's ids and types in the verify report", () => {
      const capture = file('escapes.jsonl', jsonl([good[0], { type: 'TEXT_MESSAGE_CONTENT', messageId: '\u001b[2J\u009b31m', delta: 'x' }, { type: '\u001b]0;pwned\u0007' }]));
      const { status, stdout } = run(['verify', capture]);
      expect(status).toBe(1);
      expect(stdout).not.toMatch(controls);
      expect(stdout).toContain("#1 TEXT_MESSAGE_CONTENT: TEXT_MESSAGE_CONTENT for text message '\\x1b[2J\\x9b31m', which is not open.");
      expect(stdout).toMatch(/^#2 \\x1b\]0;pwned\\x07: /m);
    });

    it('should escape control characters of arguments and of a RUN_ERROR message it repeats', () => {
      const command = run(['\u001b[2Jlint']);
      expect(command.stderr).not.toMatch(controls);
      expect(command.stderr).toMatch(/^agui-rx: unknown command '\\x1b\[2Jlint'\.\n/);
      const missing = run(['verify', join(dir, '\u001b[31mnowhere.sse')]);
      expect(missing.stderr).toBe(`agui-rx: cannot read ${join(dir, '\\x1b[31mnowhere.sse')}: no such file.\n`);
      // The provider's own error message goes into RUN_ERROR as it came.
      const recording = file('provider-error.jsonl', jsonl([{ type: 'error', code: 'x', message: '\u001b[2Jboom', sequence_number: 1 }]));
      const converted = run(['convert', '--from', 'openai-responses', recording]);
      expect(converted.status).toBe(1);
      expect(converted.stderr).not.toMatch(controls);
      expect(converted.stderr).toContain('failed mid-stream: \\x1b[2Jboom (x)');
    });
  });

  describe('failures a script must see', () => {
    it('should exit 1 and say why when the conversion ends with RUN_ERROR, still printing the stream', () => {
      const file = join(dir, 'null.jsonl');
      writeFileSync(file, 'null\n');
      const { status, stdout, stderr } = run(['convert', '--from', 'openai-chat', file]);
      expect(status).toBe(1);
      expect(sseEvents(stdout).map((event) => event.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(stderr).toMatch(/^agui-rx: the conversion ended with RUN_ERROR: fromOpenAIChatCompletions received null where a chat\.completion\.chunk object/);
    });

    it('should exit 2 for a recording with nothing to convert', () => {
      const file = join(dir, 'empty.jsonl');
      writeFileSync(file, '');
      expect(run(['convert', '--from', 'openai-chat', file])).toMatchObject({ status: 2, stdout: '', stderr: `agui-rx: ${file} holds no chat.completion.chunk records: nothing to convert.\n` });
    });

    it('should end a repaired run with RUN_ERROR when an event nests too deeply to encode, and exit 1 saying so', () => {
      const file = join(dir, 'deep.jsonl');
      writeFileSync(file, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n{"type":"CUSTOM","name":"x","value":${'['.repeat(100_000)}${']'.repeat(100_000)}}\n`);
      const { status, stdout, stderr } = run(['verify', '--fix', file]);
      expect(status).toBe(1);
      expect(stderr).toBe("agui-rx: verify --fix could not repair run 'r': it ends with RUN_ERROR: The CUSTOM event cannot be encoded: Maximum call stack size exceeded. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.\n");
      expect(sseEvents(stdout)).toEqual([
        { type: 'RUN_STARTED', threadId: 't', runId: 'r', protocolVersion: '1.0' },
        {
          type: 'RUN_ERROR',
          code: 'INVALID_EVENT',
          message:
            'The CUSTOM event cannot be encoded: Maximum call stack size exceeded. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.',
        },
      ]);
    });
  });

  describe('convert --from every provider format', () => {
    const cases: [string, string][] = [
      ['openai-chat', 'openai-chat-completions/parallel-tool-calls-interleaved.sse'],
      ['openai-responses', 'openai-responses/two-calls-interleaved.sse'],
      ['anthropic', 'anthropic-messages/two-tool-uses.sse'],
      ['ai-sdk', 'vercel-ai-sdk/fullstream-steps.json'],
      ['langchain', 'langgraph/list-content-input-json-delta.events-v2.jsonl'],
      ['langgraph', 'langgraph/plain-json-subgraph-namespace.values-messages.jsonl'],
    ];
    it.each(cases)('should convert a %s recording into a stream the official client accepts', async (provider, fixture) => {
      const file = resolve(__dirname, '../../fixtures', fixture);
      const { status, stdout, stderr } = run(['convert', '--from', provider, file]);
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      const events = sseEvents(stdout);
      expect(events[0].type).toBe('RUN_STARTED');
      expect(events[events.length - 1].type).toBe('RUN_FINISHED');
      await expect(runWithOracle(from(events as never[]))).resolves.toBeDefined();
    });
  });
});
