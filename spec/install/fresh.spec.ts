import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTempProject, itWithRegistry, registryReachable, type TempProject } from '../support/install.js';

// Pinned, so that CI installs the same tree every time: the newest of each major, as a fresh
// `npm install` gets them (docs/versions.md). @ag-ui/client 1.0.0 pins rxjs 7.8.1 exactly, so
// this project holds two copies of rxjs: the user's 7.8.2 and the client's own.
const VERSIONS = { '@ag-ui/client': '1.0.0', rxjs: '7.8.2', zod: '4.6.7', '@types/node': '20.19.43', '@types/jest': '30.0.0' };

const online = registryReachable();
const itOnline = itWithRegistry(online, 'agui-rx in a fresh project (rxjs 7.8.2, zod 4, exactOptionalPropertyTypes)');

// A user's code: option values that may be undefined, agents, events, the client classes as AbstractAgent, the jest matcher.
const app = `
import { AbstractAgent, type RunAgentInput } from '@ag-ui/client';
import { createAguiFetchHandler, stateDelta, toAgui, type AgentEvent, type AguiAgent, type ToAguiOptions } from 'agui-rx';
import { toBeWellFormedAgui } from 'agui-rx/testing';
import { fromOpenAIChatCompletions } from 'agui-rx/adapters';
import { InProcessAgent, ResumableHttpAgent, type InProcessAgentConfig } from 'agui-rx/client';
import { map, of, type Observable } from 'rxjs';

declare const input: RunAgentInput;
declare const maybeNumber: number | undefined;
declare const maybeString: string | undefined;
const agent: AguiAgent = () => of({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' } as const);
const types: Observable<string> = agent(input, { signal: new AbortController().signal }).pipe(
  toAgui({ threadId: input.threadId, runId: input.runId, parentRunId: input.parentRunId, input, initialState: input.state, onDiagnostic: undefined, generateId: undefined }),
  map((event) => event.type),
);
const options: ToAguiOptions = { threadId: 't', runId: 'r', parentRunId: maybeString, immutableState: undefined };
const handler = createAguiFetchHandler(agent, { maxBodyBytes: maybeNumber, heartbeatMs: undefined, broker: undefined });
const config: InProcessAgentConfig = { aguiOptions: { onDiagnostic: undefined }, broker: undefined, capabilities: undefined };
const agents: AbstractAgent[] = [new InProcessAgent(agent, config), new ResumableHttpAgent({ url: 'https://example.com/agent', resume: { maxRetries: maybeNumber } })];
const states = of({ type: 'STATE_SNAPSHOT', snapshot: { a: 1 } } as const).pipe(stateDelta({ initialState: undefined }));
const adapted = of().pipe(fromOpenAIChatCompletions());
// A mapper's events: a name only on a call's first chunk, a tool's output typed unknown.
declare const output: unknown;
const events: AgentEvent[] = [
  { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: maybeString, delta: maybeString },
  { type: 'TEXT_MESSAGE_CHUNK', messageId: maybeString, delta: 'Hi' },
  { type: 'TOOL_CALL_RESULT', toolCallId: 'c1', content: output },
];
// The matcher, registered as docs/testing.md says (jest's context under exactOptionalPropertyTypes).
expect.extend({ toBeWellFormedAgui });
export { types, options, handler, agents, states, adapted, events };
`;

// Runs an InProcessAgent (client 1.0.0 over its own rxjs) and a bad event through toAgui (zod 4 finds it).
const run = `
const { InProcessAgent } = require('agui-rx/client');
const { toAgui } = require('agui-rx');
const { lastValueFrom, of, toArray } = require('rxjs');
const agent = new InProcessAgent(() => of({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Hi' }), { threadId: 't' });
const bad = lastValueFrom(of({ type: 'CUSTOM', name: null, value: 1 }).pipe(toAgui({ threadId: 't', runId: 'r', onDiagnostic: () => {} }), toArray()));
Promise.all([agent.runAgent(), bad]).then(([, events]) => console.log(JSON.stringify({ messages: agent.messages, error: events.at(-1) })));
`;

describe('agui-rx in a fresh project', () => {
  let project: TempProject | undefined;
  beforeAll(() => {
    if (online) project = createTempProject(VERSIONS);
  }, 300_000);
  afterAll(() => project?.remove());

  itOnline('should install the newest rxjs 7 and zod 4 next to @ag-ui/client 1.0.0 (which keeps its own rxjs)', () => {
    const version = (path: string) => JSON.parse(readFileSync(join(project!.dir, 'node_modules', path, 'package.json'), 'utf8')).version;
    expect([version('rxjs'), version('zod'), version('@ag-ui/client')]).toEqual(['7.8.2', '4.6.7', '1.0.0']);
    // The case the types must survive: a second rxjs under the client.
    expect(existsSync(join(project!.dir, 'node_modules/@ag-ui/client/node_modules/rxjs'))).toBe(true);
  });

  itOnline('should type-check under strict and exactOptionalPropertyTypes, with two copies of rxjs', () => {
    expect(project!.typecheck({ 'app.ts': app }, { exactOptionalPropertyTypes: true, types: ['node', 'jest'] })).toBe('');
  }, 120_000);

  itOnline("should run an InProcessAgent, and turn an invalid event into RUN_ERROR naming the event and field under zod 4", () => {
    const { messages, error } = JSON.parse(project!.node(['-e', run]));
    expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hi' }]);
    // What agui-rx promises (the event, the field, what to do), not zod's wording of the problem.
    expect(error.type).toBe('RUN_ERROR');
    expect(error.message).toMatch(/^CUSTOM is not a valid AG-UI event: 'name': .+\. Fix the field in the event your agent emits \(omit optional fields rather than sending null\)\.$/);
  }, 60_000);
});
