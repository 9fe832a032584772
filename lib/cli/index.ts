#!/usr/bin/env node
/**
 * The `agui-rx` command: convert a recorded provider stream to AG-UI, verify (and repair) an
 * AG-UI capture, or start the demo. Run `agui-rx --help` for the usage.
 *
 * Exit codes: 0 done (no violations), 1 `verify` found violations (or warnings, with `--strict`), 2
 * bad usage or unreadable input.
 *
 * @packageDocumentation
 */
import { EventType, type Event } from '@ag-ui/core';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { from, lastValueFrom, of, toArray, type Observable, type OperatorFunction } from 'rxjs';
import { toAgui } from '../../operators/toAgui.js';
import {
  fromAiSdkStream,
  fromAnthropicMessages,
  fromLangChainStreamEvents,
  fromLangGraphStream,
  fromOpenAIChatCompletions,
  fromOpenAIResponses,
  parseSSE,
} from '../adapters/index.js';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { pipeFrames } from '../transports/frames.js';
import { generateId } from '../protocol/generateId.js';
import { createAguiVerifier, type AguiViolation } from '../tracking/verifier.js';

const usage = `Usage: agui-rx <command> [options]

Commands:
  convert --from <provider> <file>   Print the AG-UI stream (SSE) for a recorded provider stream:
                                     an SSE body, JSON lines or a JSON array, '-' for stdin; exit 1
                                     if the run ends with RUN_ERROR (the stream is printed all the same).
                                     <provider>: openai-chat, openai-responses, anthropic, ai-sdk,
                                     langchain (streamEvents v2), langgraph (graph.stream()).
  verify <capture> [--fix] [--strict]
                                     Check an AG-UI capture (SSE, JSON array or JSON lines) against
                                     the protocol: one line per finding, exit 1 if any is a violation
                                     (what the AG-UI specification makes fatal). Warnings, marked
                                     'warning' (what the specification tolerates: an unknown event
                                     type, outcome, content part or patch op; and our own checks: a
                                     record that is not an event, a run cut off, an empty capture),
                                     exit 1 only with --strict.
                                     --fix prints the repaired stream as SSE instead: what the
                                     specification drops or strips is dropped or stripped, with a
                                     note on stderr; the rest is kept. Events after a run's end
                                     without a RUN_STARTED become a run of their own (or are left
                                     out when they only close), with a note. Exit 1 if a run the
                                     capture did not fail ends with RUN_ERROR (could not be repaired).
  demo [--replay <file>] [--port <n>]
                                     Start the demo server on http://localhost:8000 (PORT to change).

Options:
  --thread-id <id>, --run-id <id>    Ids of the run that convert and verify --fix print
                                     (default: the capture's own, or generated).
  -h, --help                         Show this text.

Exit codes: 0 done, 1 violations found (or warnings, with --strict; or a run that convert or
verify --fix could not bring to its end), 2 bad usage or unreadable input.
`;

/**
 * Text from the input (a capture's ids and types, a JSON parser's quote of it, a path) made safe for
 * a terminal: control characters (C0, DEL, C1: the escape sequences that recolour, retitle or clear
 * a terminal) are written as `\xNN` escapes.
 */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A problem with how the command was called (`usage`) or with its input: one line on stderr, exit 2. */
class CliError extends Error {
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message);
  }
}

const runIdOptions = {
  'thread-id': { type: 'string' },
  'run-id': { type: 'string' },
} as const;

/** Runs node:util's `parseArgs` for one command, its errors (an unknown option …) as usage errors. */
function parseCommand<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    // node:util's first sentence says it ("Unknown option '--x'."); the rest is about '--' escapes.
    const [first] = (error as Error).message.split(/(?<=\.) /);
    throw new CliError(`${command}: ${first.endsWith('.') ? first : `${first}.`}`, true);
  }
}

/** The one positional argument a command takes. */
function onePath(command: string, positionals: string[], what: string): string {
  if (positionals.length !== 1) {
    throw new CliError(`${command} takes one ${what} (a path, or - for stdin), got ${positionals.length === 0 ? 'none' : positionals.map((p) => `'${p}'`).join(' ')}.`, true);
  }
  return positionals[0];
}

/** The text of a file, or of stdin for `-`, without a UTF-8 byte order mark. */
async function readText(path: string): Promise<string> {
  let text: string;
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
      throw new CliError(`cannot read ${path}: ${reason}.`);
    }
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The records of a recorded stream, whatever its framing: a JSON array, SSE (`data:` frames, a
 * `[DONE]` frame kept as the string `'[DONE]'`), or JSON lines. Detected by content.
 */
async function readRecords(path: string): Promise<unknown[]> {
  const text = await readText(path);
  const name = path === '-' ? 'stdin' : path;
  const firstLine = text.split(/\r\n|\r|\n/).find((line) => line.trim() !== '')?.trimStart() ?? '';
  const parse = (json: string, where: string) => {
    try {
      return JSON.parse(json) as unknown;
    } catch (error) {
      throw new CliError(`${name}: ${where} is not JSON (${(error as Error).message}).`);
    }
  };
  if (firstLine === '') return [];
  if (firstLine.startsWith('[')) {
    // A JSON array, or JSON lines whose records are arrays themselves (LangGraph's [mode, payload]).
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch (error) {
      // One line only: it was meant as a JSON array, and it is not one.
      if (!text.trim().includes('\n')) throw new CliError(`${name}: the capture is not JSON (${(error as Error).message}).`);
    }
    if (Array.isArray(whole)) return whole;
    if (whole !== undefined) throw new CliError(`${name}: expected a JSON array of events, or JSON lines.`);
  }
  if (/^(data|event|id|retry)\s*:|^:/.test(firstLine)) {
    // A file may end without the blank line that closes its last event: add one.
    const messages = await lastValueFrom(of(text + '\n\n').pipe(parseSSE(), toArray()));
    return messages.map((message, n) => (message.data.trim() === '[DONE]' ? '[DONE]' : parse(message.data, `SSE event ${n + 1}`)));
  }
  const records: unknown[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, n) => {
    if (line.trim() !== '') records.push(parse(line, `line ${n + 1}`));
  });
  return records;
}

/** A captured event without the fields a recorder added (`_timestamp`, `_index` …). */
function withoutRecorderFields(record: unknown): unknown {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return record;
  const fields = Object.entries(record);
  return fields.some(([key]) => key.startsWith('_')) ? Object.fromEntries(fields.filter(([key]) => !key.startsWith('_'))) : record;
}

/**
 * Writes a run's events to stdout as SSE frames as they come, through the transports' own framing
 * (an event that cannot be encoded ends the run with a RUN_ERROR frame). Resolves with the last
 * event written.
 */
function print(events$: Observable<Event>): Promise<Event | undefined> {
  return new Promise((resolve) => {
    let last: Event | undefined;
    pipeFrames(
      events$,
      {
        write(frame, event) {
          process.stdout.write(frame);
          if (event !== undefined) last = event;
        },
        end: () => resolve(last),
      },
      { heartbeatMs: 0 },
    );
  });
}

// A run that ends in RUN_ERROR is reported by the command itself (one line, escaped, with the exit code), not by toAgui's default log.
const reportedBelow = () => {};

/** The provider formats `convert --from` reads: each one's adapter, and what its records are called. */
const providers: Record<string, { adapter: () => OperatorFunction<unknown, AgentEvent>; records: string }> = {
  'openai-chat': { adapter: () => fromOpenAIChatCompletions() as OperatorFunction<unknown, AgentEvent>, records: 'chat.completion.chunk' },
  'openai-responses': { adapter: () => fromOpenAIResponses() as OperatorFunction<unknown, AgentEvent>, records: 'Responses stream event' },
  anthropic: { adapter: () => fromAnthropicMessages() as OperatorFunction<unknown, AgentEvent>, records: 'Messages stream event' },
  'ai-sdk': { adapter: () => fromAiSdkStream() as OperatorFunction<unknown, AgentEvent>, records: 'AI SDK stream part' },
  langchain: { adapter: () => fromLangChainStreamEvents() as OperatorFunction<unknown, AgentEvent>, records: 'streamEvents v2 event' },
  langgraph: { adapter: () => fromLangGraphStream() as OperatorFunction<unknown, AgentEvent>, records: 'graph.stream() part' },
};

/** `agui-rx convert --from <provider> <file>` */
async function convert(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand('convert', () =>
    parseArgs({ args, options: { from: { type: 'string' }, ...runIdOptions, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true }),
  );
  if (values.help) return showUsage();
  const provider = values.from === undefined ? undefined : providers[values.from];
  if (provider === undefined) {
    throw new CliError(
      `convert needs --from with the provider format of the recording: one of ${Object.keys(providers).join(', ')}${values.from === undefined ? '' : `; got '${values.from}'`}.`,
      true,
    );
  }
  const path = onePath('convert', positionals, 'recording');
  // Only the Chat Completions stream ends with a '[DONE]' frame; elsewhere it would be a stray record.
  const records = (await readRecords(path)).filter((record) => values.from === 'openai-chat' || record !== '[DONE]');
  if (records.length === 0) throw new CliError(`${path === '-' ? 'stdin' : path} holds no ${provider.records} records: nothing to convert.`);
  const threadId = values['thread-id'] ?? generateId();
  const runId = values['run-id'] ?? generateId();
  const last = await print(from(records).pipe(provider.adapter(), toAgui({ threadId, runId, onError: reportedBelow })));
  // The stream printed is valid AG-UI either way; a script still needs to know the conversion failed.
  if (last?.type === EventType.RUN_ERROR) {
    process.stderr.write(`agui-rx: the conversion ended with RUN_ERROR: ${printable(last.message)}\n`);
    return 1;
  }
  return 0;
}

/** One line of the verify report: `#<index> <TYPE>: <message> [<rule>]`, `[<rule>, warning]` for a warning. */
function formatViolation(violation: AguiViolation, eventCount: number): string {
  const type = violation.type ?? (violation.index >= eventCount ? '(end of stream)' : '(not an event)');
  return `#${violation.index} ${printable(type)}: ${printable(violation.message)} [${violation.rule}${violation.severity === 'warning' ? ', warning' : ''}]\n`;
}

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** `agui-rx verify <capture> [--fix]` */
async function verify(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand('verify', () =>
    parseArgs({ args, options: { fix: { type: 'boolean' }, strict: { type: 'boolean' }, ...runIdOptions, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true }),
  );
  if (values.help) return showUsage();
  const path = onePath('verify', positionals, 'capture');
  const events = (await readRecords(path)).filter((record) => record !== '[DONE]').map(withoutRecorderFields);
  if (values.fix) return fix(events, values['thread-id'], values['run-id']);

  const verifier = createAguiVerifier();
  const violations = [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
  for (const violation of violations) process.stdout.write(formatViolation(violation, events.length));
  const warnings = violations.filter((violation) => violation.severity === 'warning').length;
  const fatal = violations.length - warnings;
  const name = path === '-' ? 'stdin' : printable(path);
  const found = fatal === 0 ? 'no violations' : counted(fatal, 'violation');
  process.stdout.write(`${name}: ${counted(events.length, 'event')}, ${found}${warnings === 0 ? '' : `, ${counted(warnings, 'warning')}`}.\n`);
  return fatal > 0 || (values.strict === true && warnings > 0) ? 1 : 0;
}

/** Event types that only end what is open: after a run's terminal event they carry nothing to keep. */
const onlyCloses = new Set<string>([
  EventType.RUN_FINISHED,
  EventType.RUN_ERROR,
  EventType.TEXT_MESSAGE_END,
  EventType.TOOL_CALL_END,
  EventType.REASONING_MESSAGE_END,
  EventType.REASONING_END,
  EventType.STEP_FINISHED,
]);

/** `#3`, or `#3–#9` for a range of record indexes. */
const recordRange = (indexes: readonly number[]) => (indexes.length === 1 ? `#${indexes[0]}` : `#${indexes[0]}–#${indexes[indexes.length - 1]}`);

/**
 * `verify --fix`: the capture's events as agent events through `toAgui`, one run per RUN_STARTED
 * (a run still going when the next starts is ended first), each with the ids of its RUN_STARTED
 * unless given as options. Events after a run's RUN_FINISHED or RUN_ERROR without a RUN_STARTED of
 * their own become a run of their own when they hold anything but closers, and are left out when
 * they only close, each with a note on stderr. What is not an event at all (not an object with a
 * string `type`) is left out, with a note on stderr; `toAgui` drops an event of an unknown type and
 * strips what the AG-UI specification strips, each with a diagnostic on stderr. Exits 1 when a run
 * the capture did not end in RUN_ERROR comes out ending in one (the repair failed: the message says
 * why), 0 otherwise.
 */
async function fix(records: unknown[], threadIdOption: string | undefined, runIdOption: string | undefined): Promise<number> {
  const left: number[] = [];
  interface Run {
    events: Record<string, unknown>[];
    indexes: number[];
    // Began after an earlier run's terminal event, without a RUN_STARTED.
    orphan: boolean;
    ended: boolean;
  }
  const runs: Run[] = [{ events: [], indexes: [], orphan: false, ended: false }];
  records.forEach((record, index) => {
    const event = record as Record<string, unknown> | null;
    if (typeof event !== 'object' || event === null || Array.isArray(event) || typeof event.type !== 'string') {
      left.push(index);
      return;
    }
    let current = runs[runs.length - 1];
    const starts = event.type === EventType.RUN_STARTED;
    if (current.events.length > 0 && (starts || current.ended)) runs.push((current = { events: [], indexes: [], orphan: !starts, ended: false }));
    current.events.push(event);
    current.indexes.push(index);
    if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) current.ended = true;
  });
  if (left.length > 0) {
    process.stderr.write(`agui-rx: verify --fix left out ${left.length} record${left.length === 1 ? '' : 's'} that ${left.length === 1 ? 'is not an AG-UI event' : 'are not AG-UI events'}: ${left.map((index) => `#${index}`).join(', ')}.\n`);
  }
  const kept = runs.filter((run) => {
    if (!run.orphan) return true;
    if (run.events.every((event) => onlyCloses.has(event.type as string))) {
      process.stderr.write(`agui-rx: verify --fix left out ${recordRange(run.indexes)}: after the run's RUN_FINISHED or RUN_ERROR they only close what that run already closed.\n`);
      return false;
    }
    process.stderr.write(`agui-rx: verify --fix printed ${recordRange(run.indexes)} as a run of their own: they come after the run's RUN_FINISHED or RUN_ERROR without a RUN_STARTED.\n`);
    return true;
  });
  let failed = 0;
  for (const [n, run] of kept.entries()) {
    const started = run.events.find((event) => event.type === EventType.RUN_STARTED);
    // Read in either spelling: toAgui reads a snake_case capture (`thread_id`) as camelCase too.
    const own = (field: 'threadId' | 'runId') => {
      const id = started?.[field] ?? started?.[field === 'threadId' ? 'thread_id' : 'run_id'];
      return typeof id === 'string' && id !== '' ? id : undefined;
    };
    // --run-id names the first run only: each run needs its own id.
    const threadId = threadIdOption ?? own('threadId') ?? generateId();
    const runId = (n === 0 ? runIdOption : undefined) ?? own('runId') ?? generateId();
    const last = await print(from(run.events as unknown as AgentEvent[]).pipe(toAgui({ threadId, runId, onError: reportedBelow })));
    // A run the capture ended in RUN_ERROR is repaired faithfully; one that ends so only now could not be repaired.
    if (last?.type === EventType.RUN_ERROR && !run.events.some((event) => event.type === EventType.RUN_ERROR)) {
      failed++;
      process.stderr.write(`agui-rx: verify --fix could not repair run '${printable(runId)}': it ends with RUN_ERROR: ${printable(last.message)}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** `agui-rx demo [...]`: hands its arguments to the demo. */
async function demo(args: string[]): Promise<number> {
  // Loaded only for this command: the demo brings its server and page along.
  const { runDemo } = await import('../demo/main.js');
  await runDemo(args);
  return 0;
}

/** The usage text: asked for (`--help`), on stdout with success; as a reply to a mistake, on stderr with exit 2. */
function showUsage(asked = true): number {
  (asked ? process.stdout : process.stderr).write(usage);
  return asked ? 0 : 2;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'convert':
        return await convert(rest);
      case 'verify':
        return await verify(rest);
      case 'demo':
        return await demo(rest);
      case '-h':
      case '--help':
      case 'help':
        return showUsage();
      case undefined:
        return showUsage(false);
      default:
        process.stderr.write(`agui-rx: unknown command '${printable(command)}'.\n`);
        return showUsage(false);
    }
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`agui-rx: ${printable(error.message)}${error.usage ? " Run 'agui-rx --help' for the usage." : ''}\n`);
    } else {
      process.stderr.write(`agui-rx: ${printable(error instanceof Error ? error.message : String(error))}\n`);
    }
    return 2;
  }
}

// A reader that goes away (`agui-rx convert … | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
