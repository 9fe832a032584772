import { EventType } from '@ag-ui/core';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import * as table from '../../../lib/protocol/table.js';
import type { EntityKind, LifecycleFacts } from '../../../lib/protocol/table.js';

const root = join(__dirname, '../../..');
const tablePath = 'lib/protocol/table.ts';

/** The TypeScript sources under lib/ and operators/, relative to the repository root. */
function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}
const files = [...sources('lib'), ...sources('operators')];
const parse = (path: string) => ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.Latest, true);

/** The identifiers and string literals of the code (comments are not nodes), with their positions. */
function names(node: ts.Node, out: { text: string; at: number }[] = [], intoFunctions = true): { text: string; at: number }[] {
  if (!intoFunctions && ts.isFunctionLike(node)) return out;
  if (ts.isIdentifier(node) || ts.isStringLiteral(node)) out.push({ text: node.text, at: node.getStart() });
  ts.forEachChild(node, (child) => void names(child, out, intoFunctions));
  return out;
}

/** The shortest stretch of code (in characters) that names every one of `wanted`, or Infinity. */
function shortestSpan(found: readonly { text: string; at: number }[], wanted: readonly string[]): number {
  const hits = found.filter((name) => wanted.includes(name.text));
  let best = Infinity;
  for (let i = 0; i < hits.length; i++) {
    const seen = new Set<string>();
    for (let j = i; j < hits.length && hits[j].at - hits[i].at < best; j++) {
      seen.add(hits[j].text);
      if (seen.size === wanted.length) best = hits[j].at - hits[i].at;
    }
  }
  return best;
}

/** The kinds whose start and end event types one data literal (an object or array, not code in it) holds, apart from any other kind's start. */
function kindRecords(source: ts.SourceFile, kinds: readonly EntityKind[]): Set<string> {
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node)) {
      const inside = new Set(names(node, [], false).map((name) => name.text));
      for (const kind of kinds) {
        const others = kinds.filter((other) => other !== kind && inside.has(other.start));
        if (inside.has(kind.start) && kind.end.some((end) => inside.has(end)) && others.length === 0) found.add(kind.name);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The text of every string and template literal of the code. */
function literalTexts(node: ts.Node, out: string[] = []): string[] {
  if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) out.push(node.text);
  ts.forEachChild(node, (child) => void literalTexts(child, out));
  return out;
}

describe('the protocol table', () => {
  describe('the facts it holds', () => {
    it('should list the per-token events of AG-UI 1.0, with their id fields and kinds', () => {
      expect([...table.tokenEventTypes].sort()).toEqual([EventType.REASONING_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_CONTENT, EventType.TOOL_CALL_ARGS]);
      expect(Object.fromEntries(table.tokenIdField)).toEqual({ TEXT_MESSAGE_CONTENT: 'messageId', TOOL_CALL_ARGS: 'toolCallId', REASONING_MESSAGE_CONTENT: 'messageId' });
      for (const type of Object.values(EventType)) {
        expect([type, table.isTokenEventType(type)]).toEqual([type, table.tokenEventTypes.has(type)]);
        expect([type, table.tokenIdFieldOf(type)]).toEqual([type, table.tokenIdField.get(type)]);
        expect([type, table.tokenKindOf(type)]).toEqual([type, table.tokenKinds.get(type)]);
      }
      for (const other of [undefined, null, 0, '', 'TEXT_MESSAGE_CONTENT ', {}]) expect(table.isTokenEventType(other)).toBe(false);
    });

    it('should look up per-token types beyond the ones it tests with === as well', () => {
      const fakes = [1, 2, 3].map(
        (n) => ({ ...table.entityKind.toolCall, name: `fake${n}`, start: `FAKE${n}_START`, content: `FAKE${n}_CONTENT`, end: [`FAKE${n}_END`], chunk: undefined }) as unknown as EntityKind,
      );
      const index = table.indexEntityKinds([...table.entityKinds, ...fakes]);

      for (const fake of fakes) {
        expect(index.isTokenEventType(fake.content)).toBe(true);
        expect(index.tokenKindOf(fake.content)).toBe(fake);
        expect(index.tokenIdFieldOf(fake.content)).toBe('toolCallId');
        expect(index.isTokenEventType(fake.start)).toBe(false);
      }
      expect(index.isTokenEventType(EventType.TOOL_CALL_ARGS)).toBe(true);
      expect(index.tokenEventTypes.size).toBe(6);
      expect(table.indexEntityKinds([]).isTokenEventType(undefined)).toBe(false);
      expect(table.indexEntityKinds([]).tokenKindOf(undefined)).toBeUndefined();
    });

    it('should give every start, content, end and chunk event one kind and role', () => {
      expect(Object.fromEntries([...table.entityEvents].map(([type, entry]) => [type, `${entry.kind.name} ${entry.role}`]))).toEqual({
        TOOL_CALL_START: 'toolCall start',
        TOOL_CALL_ARGS: 'toolCall content',
        TOOL_CALL_END: 'toolCall end',
        TOOL_CALL_CHUNK: 'toolCall chunk',
        TEXT_MESSAGE_START: 'textMessage start',
        TEXT_MESSAGE_CONTENT: 'textMessage content',
        TEXT_MESSAGE_END: 'textMessage end',
        TEXT_MESSAGE_CHUNK: 'textMessage chunk',
        REASONING_MESSAGE_START: 'reasoningMessage start',
        REASONING_MESSAGE_CONTENT: 'reasoningMessage content',
        REASONING_MESSAGE_END: 'reasoningMessage end',
        REASONING_MESSAGE_CHUNK: 'reasoningMessage chunk',
        REASONING_START: 'reasoning start',
        REASONING_END: 'reasoning end',
        STEP_STARTED: 'step start',
        STEP_FINISHED: 'step end',
        SUBAGENT_STARTED: 'subagent start',
        SUBAGENT_FINISHED: 'subagent end',
        SUBAGENT_ERROR: 'subagent end',
      });
    });

    it('should end a chunk stream before what the client ends it for', () => {
      expect([...table.chunkStreamClosers].sort()).toEqual(
        [
          'TOOL_CALL_START',
          'TOOL_CALL_ARGS',
          'TOOL_CALL_END',
          'TEXT_MESSAGE_START',
          'TEXT_MESSAGE_CONTENT',
          'TEXT_MESSAGE_END',
          'REASONING_MESSAGE_START',
          'REASONING_MESSAGE_CONTENT',
          'REASONING_MESSAGE_END',
          'REASONING_START',
          'REASONING_END',
          'TOOL_CALL_RESULT',
          'STATE_SNAPSHOT',
          'STATE_DELTA',
          'CUSTOM',
          'STEP_STARTED',
          'STEP_FINISHED',
        ].sort(),
      );
    });

    it('should let the step boundaries, and text and reasoning, close a tool call only once its arguments are complete', () => {
      expect([...table.closesCompleteCallsOnly].sort()).toEqual(
        [
          EventType.REASONING_MESSAGE_CHUNK,
          EventType.REASONING_MESSAGE_CONTENT,
          EventType.REASONING_MESSAGE_START,
          EventType.REASONING_START,
          EventType.STEP_FINISHED,
          EventType.STEP_STARTED,
          EventType.TEXT_MESSAGE_CHUNK,
          EventType.TEXT_MESSAGE_CONTENT,
          EventType.TEXT_MESSAGE_START,
        ].sort(),
      );
      for (const type of [EventType.STEP_STARTED, EventType.STEP_FINISHED]) expect([type, table.turnBoundaries.get(type)]).toEqual([type, 'lane']);
    });

    it('should finish steps at the end of their subagent and of the run', () => {
      expect(Object.fromEntries(table.stepBoundaries)).toEqual({ SUBAGENT_FINISHED: 'subagent', SUBAGENT_ERROR: 'subagent', RUN_FINISHED: 'run', RUN_ERROR: 'run' });
      for (const type of [...Object.values(EventType), undefined, 'RUN_FINISHED_']) expect([type, table.stepBoundaryOf(type)]).toEqual([type, table.stepBoundaries.get(type as string)]);
      expect([...table.terminalEventTypes].sort()).toEqual([EventType.RUN_ERROR, EventType.RUN_FINISHED]);
    });

    it('should list every kind once, in both orders', () => {
      expect(table.entityKinds.map((kind) => kind.name)).toEqual(['toolCall', 'textMessage', 'reasoningMessage', 'reasoning', 'step', 'subagent']);
      expect(table.stillOpenOrder.map((kind) => kind.name)).toEqual(['step', 'textMessage', 'reasoningMessage', 'reasoning', 'toolCall', 'subagent']);
    });
  });

  describe('its consumers', () => {
    const consumers = [
      'lib/protocol/createOperator.ts',
      'lib/protocol/validate.ts',
      'lib/protocol/agentEvent.ts',
      'lib/tracking/verifier.ts',
      'lib/tracking/openEntities.ts',
      'lib/tracking/steps.ts',
      'lib/transports/encodeSSE.ts',
      'operators/coalesceDeltas.ts',
      'operators/mapStepLifecycle.ts',
      'operators/mapSubagentLifecycle.ts',
    ];

    it.each(consumers)('should have %s import the table', (path) => {
      const imports = parse(path).statements.filter(ts.isImportDeclaration).map((statement) => (statement.moduleSpecifier as ts.StringLiteral).text);
      expect(imports.some((specifier) => /(^|\/)protocol\/table\.js$|^\.\/table\.js$/.test(specifier))).toBe(true);
    });

    it('should have verifyAgui check through the verifier, which reads the table', () => {
      const imports = parse('operators/verifyAgui.ts').statements.filter(ts.isImportDeclaration).map((statement) => (statement.moduleSpecifier as ts.StringLiteral).text);
      expect(imports).toContain('../lib/tracking/verifier.js');
    });

    it('should have no other file under lib/ or operators/ spell out the per-token set', () => {
      const tokens = [...table.tokenEventTypes];
      // All of them within a few lines of code: a set, a condition, a map (a switch that handles each apart spreads wider).
      const spelling = files.filter((path) => path !== tablePath && shortestSpan(names(parse(path)), tokens) < 300);
      expect(spelling).toEqual([]);
    });

    it('should have no other file under lib/ or operators/ spell out the entity kinds', () => {
      const spelling = files.filter((path) => path !== tablePath && kindRecords(parse(path), table.entityKinds).size >= 2);
      expect(spelling).toEqual([]);
    });

    it('should have no other file under lib/ or operators/ word a step or subagent rule', () => {
      const facts: LifecycleFacts = { type: '\u0000', id: '\u0000', lane: '\u0000', runningIn: '\u0000', parent: '\u0000', since: 0 };
      // The fixed wording between the facts, e.g. ", which is already running".
      const fragments = Object.values(table.lifecycleRules).flatMap((rule) =>
        rule
          .message(facts)
          .replace(/ \(since #0\)/g, '\u0000')
          .split('\u0000')
          .map((part) => part.trim())
          .filter((part) => part.length >= 20),
      );
      expect(fragments.length).toBeGreaterThanOrEqual(7);
      const wording = files
        .filter((path) => path !== tablePath)
        .flatMap((path) => {
          const texts = literalTexts(parse(path));
          return fragments.filter((fragment) => texts.some((text) => text.includes(fragment))).map((fragment) => `${path}: ${fragment}`);
        });
      expect(wording).toEqual([]);
    });

    it('should find what it looks for (the checks above can fail)', () => {
      const source = (text: string) => ts.createSourceFile('probe.ts', text, ts.ScriptTarget.Latest, true);
      const spelled = source(`const t = new Set(['TEXT_MESSAGE_CONTENT', 'TOOL_CALL_ARGS', EventType.REASONING_MESSAGE_CONTENT]);`);
      const kinds = source(`const k = [{ open: EventType.TEXT_MESSAGE_START, close: EventType.TEXT_MESSAGE_END }, { open: 'TOOL_CALL_START', close: ['TOOL_CALL_END'] }];`);
      const handlers = source(`const h = { next(e) { if (e.type === 'TEXT_MESSAGE_START' || e.type === 'TEXT_MESSAGE_END') return; } };`);

      expect(shortestSpan(names(spelled), [...table.tokenEventTypes])).toBeLessThan(300);
      expect([...kindRecords(kinds, table.entityKinds)].sort()).toEqual(['textMessage', 'toolCall']);
      expect(kindRecords(handlers, table.entityKinds).size).toBe(0);
      expect(literalTexts(source('const m = `a ${x} which is not running. Send`;'))).toContain(' which is not running. Send');
      expect(relative(root, join(root, tablePath))).toBe(tablePath);
    });
  });

  describe('a changed table', () => {
    const tableModule = '../../../lib/protocol/table';
    const fakeKind = {
      ...table.entityKind.textMessage,
      name: 'fakeMessage',
      noun: 'fake message',
      nouns: 'fake messages',
      start: 'FAKE_MESSAGE_START',
      content: 'FAKE_MESSAGE_CONTENT',
      end: ['FAKE_MESSAGE_END'],
      chunk: undefined,
      chunkAgrees: [],
      closesInLane: [],
    } as unknown as EntityKind;

    interface Modules {
      rxjs: typeof import('rxjs');
      createOperator: typeof import('../../../lib/protocol/createOperator.js');
      validate: typeof import('../../../lib/protocol/validate.js');
      verifier: typeof import('../../../lib/tracking/verifier.js');
      coalesceDeltas: typeof import('../../../operators/coalesceDeltas.js');
    }

    /** The consumers, loaded afresh; with `changed`, against a table that has a fourth per-token event type. */
    function load(changed: boolean): Modules {
      let modules: Modules | undefined;
      jest.isolateModules(() => {
        if (changed) {
          jest.doMock(tableModule, () => {
            const actual = jest.requireActual<typeof table>(tableModule);
            const kinds = [...actual.entityKinds, fakeKind];
            return { ...actual, entityKinds: kinds, ...actual.indexEntityKinds(kinds) };
          });
        }
        modules = {
          rxjs: require('rxjs'),
          createOperator: require('../../../lib/protocol/createOperator'),
          validate: require('../../../lib/protocol/validate'),
          verifier: require('../../../lib/tracking/verifier'),
          coalesceDeltas: require('../../../operators/coalesceDeltas'),
        };
      });
      jest.dontMock(tableModule);
      return modules!;
    }

    const token = { type: 'FAKE_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hi' };

    /** What an operator that declares `passesTokenEvents` sees, second in a fused chain. */
    function seenBySkipper({ rxjs, createOperator }: Modules): { seen: unknown[]; out: unknown[] } {
      const seen: unknown[] = [];
      const out: unknown[] = [];
      const forward = createOperator.createOperator<unknown, unknown>((subscriber) => ({ next: (value) => subscriber.next(value) }));
      const skipper = createOperator.createOperator<unknown, unknown>(
        (subscriber) => ({
          next(value) {
            seen.push(value);
            subscriber.next(value);
          },
        }),
        { passesTokenEvents: true },
      );
      const custom = { type: 'CUSTOM', name: 'n', value: 1 };
      rxjs.of(token, custom).pipe(createOperator.fuse(forward, skipper)).subscribe((value) => out.push(value));
      expect(out).toEqual([token, custom]);
      return { seen, out };
    }

    it("should have fuse's per-token skip follow it", () => {
      expect(seenBySkipper(load(false)).seen).toEqual([token, { type: 'CUSTOM', name: 'n', value: 1 }]);
      expect(seenBySkipper(load(true)).seen).toEqual([{ type: 'CUSTOM', name: 'n', value: 1 }]);
    });

    it('should have the validator check the new per-token event by hand', () => {
      const before = load(false).validate;
      const after = load(true).validate;

      expect(() => before.assertWireEvent(token)).toThrow('FAKE_MESSAGE_CONTENT is not a valid AG-UI event');
      expect(after.assertWireEvent(token)).toBe(token);
      expect(() => after.assertWireEvent({ type: 'FAKE_MESSAGE_CONTENT', delta: 'Hi' })).toThrow("FAKE_MESSAGE_CONTENT has 'messageId: undefined', but 'messageId' must be a string.");
      expect(() => after.assertWireEvent({ ...token, timestamp: null })).toThrow("FAKE_MESSAGE_CONTENT has 'timestamp: null', but 'timestamp' must be absent or set");
    });

    it('should have the verifier stream the new per-token event like the others', () => {
      const events = [
        { type: EventType.RUN_STARTED, threadId: 't', runId: 'r' },
        { type: 'FAKE_MESSAGE_START', messageId: 'm1' },
        token,
        { ...token, messageId: 'm2' },
        { type: 'FAKE_MESSAGE_END', messageId: 'm1' },
        { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' },
      ];
      const violations = (modules: Modules) => {
        const verifier = modules.verifier.createAguiVerifier();
        return [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()].map(({ index, rule }) => `#${index} ${rule}`);
      };

      expect(violations(load(false))).toEqual(['#1 unknown-type', '#2 unknown-type', '#3 unknown-type', '#4 unknown-type']);
      // The schema still knows no fake start or end (invalid-event); the sequence rules follow the table.
      expect(violations(load(true))).toEqual(['#1 invalid-event', '#3 content-without-start', '#4 invalid-event']);
      const verifier = load(true).verifier.createAguiVerifier();
      verifier.verify(events[0], 0);
      expect(verifier.verify(events[3], 3)[0].message).toBe(
        "FAKE_MESSAGE_CONTENT for fake message 'm2', which is not open. Send FAKE_MESSAGE_START first, and nothing for the fake message after its FAKE_MESSAGE_END.",
      );
    });

    it('should have coalesceDeltas merge the new per-token event', () => {
      const merged = ({ rxjs, coalesceDeltas }: Modules) => {
        const out: unknown[] = [];
        rxjs
          .of(token, { ...token, delta: ' there' }, { type: 'CUSTOM', name: 'n', value: 1 })
          .pipe(coalesceDeltas.coalesceDeltas({ intervalMs: 10 }) as never)
          .subscribe((event) => out.push(event));
        return out.map((event) => (event as { delta?: string; type: string }).delta ?? (event as { type: string }).type);
      };

      expect(merged(load(false))).toEqual(['Hi', ' there', 'CUSTOM']);
      expect(merged(load(true))).toEqual(['Hi there', 'CUSTOM']);
    });
  });
});
