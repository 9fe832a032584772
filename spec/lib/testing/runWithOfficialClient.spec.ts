import { AGUIError, EventType, type Event, type Message, type RunAgentInput } from '@ag-ui/core';
import { concat, defer, of, throwError } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { aguiMarbles, runWithOfficialClient } from '../../../lib/testing/index.js';
import { toAgui } from '../../../operators/toAgui.js';
import { errorOf } from '../../support/helpers.js';

const m = aguiMarbles();

describe('runWithOfficialClient', () => {
  it('should resolve with the messages, state, new messages and result the client built', async () => {
    const agent$ = of<AgentEvent[]>(
      m.chunk.text('Looking it up'),
      m.chunk.toolCall('search', '{"q":"rxjs"}', { toolCallId: 'call-1' }),
      m.toolCall('call-1', 'search').result({ hits: 3 }),
      m.state.snapshot({ searches: 1 }),
      { type: EventType.RUN_FINISHED, result: { answer: 42 } },
    );
    const run = await runWithOfficialClient(agent$.pipe(toAgui(aguiMarbles().runOptions)));
    const expectedMessages = [
      { id: 'id-1', role: 'assistant', content: 'Looking it up', toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'search', arguments: '{"q":"rxjs"}' } }] },
      { id: 'id-2', role: 'tool', toolCallId: 'call-1', content: '{"hits":3}' },
    ];
    expect(run).toEqual({
      messages: expectedMessages,
      newMessages: expectedMessages,
      state: { searches: 1 },
      result: { answer: 42 },
      events: expect.any(Array),
    });
    expect(run.events.map((event) => event.type)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_RESULT,
      EventType.STATE_SNAPSHOT,
      EventType.RUN_FINISHED,
    ]);
  });

  it('should leave result out when the run sent none', async () => {
    const run = await runWithOfficialClient(of(m.run.started(), m.run.finished()));
    expect('result' in run).toBe(false);
    expect(run).toMatchObject({ messages: [], newMessages: [], state: {} });
  });

  it('should start from the given messages and state, and pass the run input to a stream factory', async () => {
    const initialMessages: Message[] = [{ id: 'u1', role: 'user', content: 'Hi' }];
    let input: RunAgentInput | undefined;
    const run = await runWithOfficialClient(
      (runInput) => {
        input = runInput;
        return of<AgentEvent[]>(m.chunk.text('Hello', { messageId: 'a1' }), m.state.delta([{ op: 'add', path: '/seen', value: true }])).pipe(
          toAgui({ threadId: runInput.threadId, runId: runInput.runId, input: runInput }),
        );
      },
      { threadId: 'thread-7', runId: 'run-7', initialMessages, initialState: { seen: false }, forwardedProps: { locale: 'nb' } },
    );
    expect(input).toMatchObject({ threadId: 'thread-7', runId: 'run-7', messages: initialMessages, state: { seen: false }, forwardedProps: { locale: 'nb' } });
    expect(run.messages).toEqual([...initialMessages, { id: 'a1', role: 'assistant', content: 'Hello' }]);
    expect(run.newMessages).toEqual([{ id: 'a1', role: 'assistant', content: 'Hello' }]);
    expect(run.state).toEqual({ seen: true });
  });

  it("should reject with the client's error on a malformed stream, printing nothing", async () => {
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const malformed$ = of<Event[]>(m.run.started(), m.text('m1').content('Hi'), m.run.finished());
      const error = await errorOf(runWithOfficialClient(malformed$));
      expect(error).toBeInstanceOf(AGUIError);
      expect((error as Error).message).toMatch(/^Cannot send 'TEXT_MESSAGE_CONTENT' event: No active text message found with ID 'm1'/);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });

  it("should reject with the stream's own error", async () => {
    await expect(runWithOfficialClient(concat(of(m.run.started()), throwError(() => new Error('boom'))))).rejects.toThrow('boom');
  });

  it('should subscribe to the stream once per call', async () => {
    let subscriptions = 0;
    const events$ = defer(() => {
      subscriptions++;
      return of(m.run.started(), m.run.finished());
    });
    await runWithOfficialClient(events$);
    await runWithOfficialClient(events$);
    expect(subscriptions).toBe(2);
  });

  it('should reject with an install hint when @ag-ui/client is not installed', async () => {
    await jest.isolateModulesAsync(async () => {
      jest.doMock('@ag-ui/client', () => {
        throw Object.assign(new Error("Cannot find module '@ag-ui/client' from 'lib/testing/runWithOfficialClient.ts'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { runWithOfficialClient: isolated } = require('../../../lib/testing/runWithOfficialClient.js') as typeof import('../../../lib/testing/runWithOfficialClient.js');
      const error = await errorOf(isolated(of(m.run.started(), m.run.finished())));
      expect(error).toMatchObject({
        name: 'AguiRxError',
        code: 'MISSING_PEER_DEPENDENCY',
        message:
          "runWithOfficialClient needs the official AG-UI client, '@ag-ui/client', which could not be loaded (Cannot find module '@ag-ui/client' from 'lib/testing/runWithOfficialClient.ts'). It is an optional peer dependency of agui-rx: install it with `npm install -D @ag-ui/client`.",
      });
    });
    jest.dontMock('@ag-ui/client');
  });

  it('should take an array of events as well as an Observable', async () => {
    const events: Event[] = [
      { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1' },
      { type: EventType.STATE_SNAPSHOT, snapshot: { n: 1 } },
      { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' },
    ];
    expect((await runWithOfficialClient(events)).state).toEqual({ n: 1 });
  });

  it('should reject what is no stream of events with INVALID_ARGUMENT, naming what it got', async () => {
    const direct = await errorOf(runWithOfficialClient(null as never));
    expect(direct).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((direct as Error).message).toBe(
      'runWithOfficialClient needs an Observable of AG-UI events (or an array, promise or async iterable of them), or a function of RunAgentInput that returns one; got null.',
    );
    expect(await errorOf(runWithOfficialClient((() => 42) as never))).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
