import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** One row of `node spec/bench/index.mjs --json` (see spec/bench/harness.mjs `row`). */
interface BenchRow {
  item: number | string;
  name: string;
  module: string;
  contenders: { name: string; value: number }[];
  unit: string;
  ratio: number;
  correct?: boolean;
  target?: { op: '>=' | '<='; value: number };
  /** Set when the row's figure is a difference or a count in this unit rather than a ratio (it may be 0 or negative). */
  ratioUnit?: string;
}

const root = resolve(__dirname, '../..');
const built = resolve(root, 'dist/esm/lib/index.js');

/** The row of `item` whose name contains `text`. */
function find(rows: BenchRow[], item: number | string, text: string): BenchRow {
  const found = rows.find((r) => r.item === item && r.name.includes(text));
  if (found === undefined) throw new Error(`No bench row for item ${item} '${text}' in: ${rows.map((r) => `${r.item} ${r.name}`).join('; ')}`);
  return found;
}

/** The row of `item` whose name contains every one of `texts`. */
function findWith(rows: BenchRow[], item: number | string, texts: string[]): BenchRow {
  const found = rows.find((r) => r.item === item && texts.every((text) => r.name.includes(text)));
  if (found === undefined) throw new Error(`No bench row for item ${item} ${texts.map((t) => `'${t}'`).join(' ')} in: ${rows.map((r) => `${r.item} ${r.name}`).join('; ')}`);
  return found;
}

// The bench's ratios only, with generous margins: CI machines are shared and noisy, so this never
// checks an absolute time and never a target; `npm run bench` reports those.
describe('bench (npm run bench --quick)', () => {
  let rows: BenchRow[];
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(built)) throw new Error(`${built} is missing: run 'npm run build' first ('npm test' does).`);
    dir = mkdtempSync(join(tmpdir(), 'agui-rx-bench-'));
    const json = join(dir, 'bench.json');
    await promisify(execFile)(process.execPath, ['spec/bench/index.mjs', '--quick', '--json', json], { cwd: root, timeout: 90_000, maxBuffer: 1 << 22 });
    rows = (JSON.parse(readFileSync(json, 'utf8')) as { rows: BenchRow[] }).rows;
  }, 95_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('should report every item of issues 7 and 17', () => {
    const items = new Set(rows.map((r) => String(r.item)));
    for (const item of ['1', '2', '3', '4', '5a', '5b', '5c', '5d', '6', '7', '8', '13', '17']) expect(items).toContain(item);
    // The run broker's (issue 13): 10 and the Redis latency rows only where redis-server is installed.
    for (const item of ['9', '11', '12']) expect(items).toContain(item);
    for (const op of ['openMessageStartContentEnd', 'toolCallCorrelator', 'mapStepLifecycle', 'stateDelta', 'activityDelta', 'mapRunLifecycle', 'coalesceDeltas', 'messagesSnapshot']) {
      find(rows, 3, `${op} alone`);
    }
  });

  it('should report the serving rows of issue 17 (items 13-16), every figure finite', () => {
    const serving = [
      ...['paced', 'burst'].flatMap((scenario) => ['hand-written', 'official'].map((other) => findWith(rows, 13, [`CPU per token, ${scenario},`, `agui-rx vs ${other}`]))),
      ...['write path alone', 'right after a full GC'].map((what) => findWith(rows, 13, ['(breakdown) server CPU per token, paced', what])),
      ...['agui-rx vs hand-written', 'write path alone (sendSSE) vs hand-written'].map((what) => findWith(rows, 13, ['(breakdown) server CPU per run', what])),
      find(rows, 14, 'without a broker (vs hand-written)'),
      find(rows, 14, 'in-memory broker'),
      find(rows, 14, 'official stack'),
      find(rows, 14, 'write path alone'),
      find(rows, 14, '(ceiling) the connection alone'),
      ...['hand-written', 'official'].map((other) => findWith(rows, 14, ['with a history of', `vs ${other}`])),
      ...['paced', 'burst'].flatMap((scenario) => ['frames on the wire', 'bytes on the wire'].map((what) => findWith(rows, 15, [what, `, ${scenario},`]))),
      find(rows, 16, 'latency p50'),
      find(rows, 16, 'latency p99'),
    ];
    for (const r of serving) {
      expect({ name: r.name, figures: [r.ratio, ...r.contenders.map((c) => c.value)].every(Number.isFinite) }).toEqual({ name: r.name, figures: true });
    }
    // Server CPU per token or per run: some, and agui-rx within 50x of either baseline either way (a
    // per-run row's figure is a difference, µs more per run: only finite).
    for (const r of serving.filter((r) => r.item === 13)) {
      for (const c of r.contenders) expect(c.value).toBeGreaterThan(0);
      if (r.ratioUnit !== undefined) continue;
      expect(r.ratio).toBeGreaterThan(1 / 50);
      expect(r.ratio).toBeLessThan(50);
    }
    // The hand-written handler writes a frame per event: at least one per token reached the client.
    for (const r of serving.filter((r) => r.item === 15 && r.name.startsWith('frames'))) {
      expect(r.contenders[1].value).toBeGreaterThanOrEqual(Number(/× (\d+) tokens/.exec(r.name)?.[1]));
      expect(r.contenders[0].value).toBeGreaterThanOrEqual(3);
    }
    // Latencies are arrival − emission on one monotonic clock: never below 0, and p99 ≥ p50.
    for (const r of [find(rows, 16, 'latency p50'), find(rows, 16, 'latency p99')]) for (const c of r.contenders) expect(c.value).toBeGreaterThanOrEqual(0);
    expect(find(rows, 16, 'latency p99').contenders[0].value).toBeGreaterThanOrEqual(find(rows, 16, 'latency p50').contenders[0].value);
  });

  it('should give every row a finite positive ratio and finite positive figures', () => {
    for (const r of rows) {
      if (r.ratioUnit !== undefined) {
        // A difference (ms added, KB more) or a count (events per round trip): finite is all that is sane to ask.
        expect({ name: r.name, ratio: r.ratio, finite: Number.isFinite(r.ratio) }).toEqual({ name: r.name, ratio: r.ratio, finite: true });
        continue;
      }
      expect({ name: r.name, ratio: r.ratio, finite: Number.isFinite(r.ratio) && r.ratio > 0 }).toEqual({ name: r.name, ratio: r.ratio, finite: true });
      expect(r.ratio).toBeGreaterThan(1e-4);
      expect(r.ratio).toBeLessThan(1e4);
      for (const c of r.contenders) expect(Number.isFinite(c.value) && c.value > 0).toBe(true);
    }
  });

  it('should keep toAgui within 50x of a bare map', () => {
    expect(find(rows, 2, 'mixed').ratio).toBeGreaterThan(1 / 50);
    expect(find(rows, 2, 'text-only').ratio).toBeGreaterThan(1 / 50);
  });

  it('should keep the per-chunk cost of a long message or tool call within 6x that of a short one (a quadratic path gives about 8x)', () => {
    const linearity = rows.filter((r) => String(r.item) === '17');
    expect(linearity.length).toBeGreaterThanOrEqual(20);
    for (const r of linearity) expect({ name: r.name, ratio: r.ratio < 6 }).toEqual({ name: r.name, ratio: true });
  });

  it("should keep toAgui's overhead on text below transformChunks' and within 30x a bare map's", () => {
    expect(find(rows, 1, 'overhead vs official transformChunks').ratio).toBeGreaterThan(1 / 2);
    expect(find(rows, 2, 'overhead above the bare source').ratio).toBeLessThan(30);
  });

  it('should keep stateDelta on immutable states no slower than compare', () => {
    expect(find(rows, '5a', 'immutable: true').ratio).toBeGreaterThan(1);
  });

  it('should rebuild the final state from what stateDelta emitted, in every state case', () => {
    const checked = rows.filter((r) => r.correct !== undefined);
    expect(checked.length).toBeGreaterThanOrEqual(5);
    for (const r of checked) expect({ name: r.name, correct: r.correct }).toEqual({ name: r.name, correct: true });
  });

  it('should keep the heap of a long message below 3x that of a short one', () => {
    expect(find(rows, 6, 'toAgui + encodeSSE').ratio).toBeLessThan(3);
  });
});
