import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// What V8 logs (--log-maps) while a script runs toAgui over one run of every kind of event, three
// times, each after a full GC with no run open: the hidden classes made during the third run, by
// the code that made them. A hidden class made again dies at every such GC, and the optimised
// per-event code that checks it is thrown away with it: a process between runs (the bench's full GC
// before each timed run, a server idle for a while) starts its next run on unoptimised code.
// The fields of the workload's own data (its state, its arguments): a copy of the user's state and
// the arguments parsed take the classes of the user's data, whatever agui-rx does.
const USER_DATA = new Set(['turn', 'notes', 'list', 'q']);

function hiddenClassesOfLastRun(): string[] {
  const root = resolve(__dirname, '../..');
  const dist = join(root, 'dist/cjs/lib/index.js');
  const folder = mkdtempSync(join(tmpdir(), 'agui-rx-maps-'));
  const logfile = join(folder, 'v8.log');
  const script = `
    const { toAgui } = require(${JSON.stringify(dist)});
    const { from } = require('rxjs');
    // Turns enough that what runs per event or per message gets V8's feedback in each run; what
    // runs once per run does not, whatever the run.
    const events = [];
    for (let turn = 0; turn < 100; turn++) {
      events.push(
        { type: 'STEP_STARTED', stepName: 'plan' + turn },
        { type: 'REASONING_MESSAGE_CHUNK', messageId: 'r' + turn, delta: 'Thinking.' },
        { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm' + turn, delta: 'Hello' },
        { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm' + turn, delta: ' there.' },
        { type: 'TOOL_CALL_CHUNK', toolCallId: 'c' + turn, toolCallName: 'search', delta: '{"q":' },
        { type: 'TOOL_CALL_CHUNK', toolCallId: 'c' + turn, delta: '"x"}' },
        { type: 'TOOL_CALL_RESULT', toolCallId: 'c' + turn, messageId: 't' + turn, content: 'found' },
        { type: 'STATE_SNAPSHOT', snapshot: { turn, notes: 'n'.repeat(300), list: [turn] } },
        { type: 'STEP_FINISHED', stepName: 'plan' + turn },
      );
    }
    let count = 0;
    const observer = { next: () => count++, error: (error) => { throw error; } };
    for (let round = 0; round < 3; round++) {
      gc();
      // A function named after the round, compiled now: where the log's round begins.
      new Function('return function roundMarker' + round + '() {}')()();
      from(events).pipe(toAgui({ threadId: 't', runId: 'r' + round, onDiagnostic: () => {} })).subscribe(observer);
    }
    new Function('return function roundMarker3() {}')()();
  `;
  try {
    const { status, stderr } = spawnSync(process.execPath, ['--expose-gc', '--log-maps', '--no-logfile-per-isolate', `--logfile=${logfile}`, '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
      cwd: resolve(__dirname, '../..'),
    });
    if (status !== 0) throw new Error(`The script failed (${status}): ${stderr}`);
    // In log order: code-creation,<kind>,<tier>,<time>,<address>,<size>,<name>… (code is moved and
    // its space reused: a map event's pc lies in the latest code made there), and
    // map,<kind>,<time>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>.
    const code: { start: number; end: number; name: string }[] = [];
    const made: string[] = [];
    let round = -1;
    for (const line of readFileSync(logfile, 'utf8').split('\n')) {
      const fields = line.split(',');
      if (line.startsWith('code-creation,')) {
        const start = Number.parseInt(fields[4], 16);
        code.push({ start, end: start + Number(fields[5]), name: fields[6] });
        const marker = /^roundMarker(\d) /.exec(fields[6]);
        if (marker !== null) round = Number(marker[1]);
      } else if (line.startsWith('map,') && round === 2 && !USER_DATA.has(fields[9])) {
        const pc = Number.parseInt(fields[5], 16);
        let where = 'unknown code';
        for (let i = code.length - 1; i >= 0 && where === 'unknown code'; i--) if (code[i].start <= pc && pc < code[i].end) where = code[i].name;
        // agui-rx's own code only: what RxJS makes is its own (a subscriber, a Subscription).
        if (where.includes(`${root}/dist/`)) made.push(`${where.slice(where.indexOf(`${root}/dist/`) + root.length + 1)} (line ${fields[6]}): ${fields[8]} ${fields[9]}`.trim());
      }
    }
    if (round !== 3) throw new Error('The round markers are missing from the log.');
    return made;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe('toAgui and hidden classes', () => {
  it("should make no hidden class again in a run after a full GC with no run open, so that its code stays optimised", () => {
    expect(hiddenClassesOfLastRun()).toEqual([]);
  });
});
