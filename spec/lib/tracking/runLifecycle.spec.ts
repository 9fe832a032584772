import { EventType, type RunAgentInput } from '@ag-ui/core';
import { map, of } from 'rxjs';
import { fromOpenAIChatCompletions, type ChatCompletionChunk } from '../../../lib/adapters/fromOpenAIChatCompletions.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { parseSSE } from '../../../lib/transports/parseSSE.js';
import { toAgui } from '../../../operators/toAgui.js';
import { runWithOracle } from '../../support/oracle.js';
import { runErrorOf, sumTokenUsage, trackRunLifecycle, usageReports, type RunIdentity } from '../../../lib/tracking/runLifecycle.js';

const ids: RunIdentity = { threadId: 't1', runId: 'r1' };
const input: RunAgentInput = { threadId: 't1', runId: 'r1', state: {}, messages: [], tools: [], context: [], forwardedProps: {} };

/** The error `fn` throws (failing the spec when it throws none). */
function thrown(fn: () => unknown): AguiRxError {
  try {
    fn();
  } catch (error) {
    return error as AguiRxError;
  }
  throw new Error('expected a throw');
}

/** A started run. */
function started(run: RunIdentity = ids) {
  const lifecycle = trackRunLifecycle(run);
  lifecycle.start();
  return lifecycle;
}

describe('trackRunLifecycle', () => {
  describe('start', () => {
    it('should make RUN_STARTED with the run ids and protocol version, and mark the run started', () => {
      const lifecycle = trackRunLifecycle(ids);
      expect(lifecycle.started).toBe(false);

      expect(lifecycle.start()).toStrictEqual({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1', protocolVersion: '1.0' });
      expect(lifecycle.started).toBe(true);
      expect(lifecycle.ended).toBe(false);
    });

    it('should send the parentRunId and input of the run', () => {
      expect(trackRunLifecycle({ ...ids, parentRunId: 'r0', input }).start()).toStrictEqual({
        type: EventType.RUN_STARTED,
        threadId: 't1',
        runId: 'r1',
        protocolVersion: '1.0',
        parentRunId: 'r0',
        input,
      });
    });

    it("should merge upstream's RUN_STARTED: its fields kept, its ids replaced by the run's", () => {
      const upstream = { type: EventType.RUN_STARTED, threadId: 'other', runId: 'other', timestamp: 5, parentRunId: 'r0', input };

      expect(trackRunLifecycle(ids).start(upstream)).toStrictEqual({
        type: EventType.RUN_STARTED,
        threadId: 't1',
        runId: 'r1',
        protocolVersion: '1.0',
        timestamp: 5,
        parentRunId: 'r0',
        input,
      });
    });

    it("should prefer the run's parentRunId and input to upstream's", () => {
      const own = { ...input, runId: 'r1', threadId: 't1', state: { own: true } };
      const event = trackRunLifecycle({ ...ids, parentRunId: 'mine', input: own }).start({ type: EventType.RUN_STARTED, parentRunId: 'theirs', input });

      expect(event.parentRunId).toBe('mine');
      expect(event.input).toBe(own);
    });

    it('should throw INVALID_EVENT for an invalid upstream RUN_STARTED and leave the run not started', () => {
      const lifecycle = trackRunLifecycle(ids);

      const error = thrown(() => lifecycle.start({ type: EventType.RUN_STARTED, input: 'not an input' }));

      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_EVENT');
      expect(lifecycle.started).toBe(false);
      // Our own RUN_STARTED can still be made.
      expect(lifecycle.start().runId).toBe('r1');
    });
  });

  describe('admit', () => {
    it('should drop a RUN_STARTED after the run started, with the message telling what to do', () => {
      expect(started().admit({ type: EventType.RUN_STARTED }, EventType.RUN_STARTED)).toBe(
        "Dropped an upstream RUN_STARTED that came after the run had started. Pass parentRunId and input as options of mapRunLifecycle (or toAgui), or emit RUN_STARTED as the agent's first, synchronous event.",
      );
    });

    it('should pass a valid event and record what it opens, for the end of the run', () => {
      const lifecycle = started();
      const event = { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' };

      expect(lifecycle.admit(event, event.type)).toBeUndefined();
      expect(lifecycle.end(lifecycle.finished()).closers).toStrictEqual([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }]);
    });

    it('should drop an event of an unknown type with a diagnostic, not fail the run (AG-UI spec 1.1, Processing Model)', () => {
      const lifecycle = started();

      expect(lifecycle.admit({ type: 'BOGUS' }, 'BOGUS')).toBe(
        "Dropped an event of unknown type 'BOGUS': AG-UI 1.0 does not describe it, and a consumer drops it. Emit one of the AG-UI 1.0 event types (EventType from @ag-ui/core), or wrap provider data in a RAW or CUSTOM event.",
      );
      expect(lifecycle.ended).toBe(false);
    });

    it('should throw INVALID_EVENT for a known type with invalid fields', () => {
      expect(thrown(() => started().admit({ type: EventType.STEP_STARTED, stepName: 42 }, EventType.STEP_STARTED)).code).toBe('INVALID_EVENT');
    });

    it('should drop a step finished while not running, and not record it', () => {
      const lifecycle = started();
      const event = { type: EventType.STEP_FINISHED, stepName: 'plan' };

      expect(lifecycle.admit(event, event.type)).toMatch(/^Dropped STEP_FINISHED for step 'plan'/);
      expect(lifecycle.end(lifecycle.finished()).closers).toStrictEqual([]);
    });

    it('should throw INVALID_EVENT for a fatal sequence problem: a parent subagent never started', () => {
      const event = { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-2', name: 'helper', parentSubagentRunId: 'sub-1' };

      const error = thrown(() => started().admit(event, event.type));

      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toMatch(/names parentSubagentRunId 'sub-1', which has not started in this run/);
    });
  });

  describe('finished', () => {
    it("should make RUN_FINISHED with the run's ids, upstream's result kept, and a success outcome", () => {
      const event = started().finished({ type: EventType.RUN_FINISHED, threadId: 'x', runId: 'y', result: { answer: 42 } });

      expect(event).toStrictEqual({ type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', result: { answer: 42 }, outcome: { type: 'success' } });
    });

    it('should list the tool calls started without a result as pending, after those upstream lists', () => {
      const lifecycle = started();
      for (const id of ['tc1', 'tc2']) lifecycle.admit({ type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: 'search' }, EventType.TOOL_CALL_START);
      lifecycle.admit({ type: EventType.TOOL_CALL_RESULT, messageId: 'm', toolCallId: 'tc1', content: 'ok' }, EventType.TOOL_CALL_RESULT);

      const event = lifecycle.finished({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['tc0'] } });

      expect(event.outcome).toStrictEqual({ type: 'success', pendingToolCallIds: ['tc0', 'tc2'] });
    });

    it("should keep a given outcome (cancelled) over upstream's and the pending calls", () => {
      const lifecycle = started();
      lifecycle.admit({ type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' }, EventType.TOOL_CALL_START);

      expect(lifecycle.finished(undefined, { type: 'cancelled' }).outcome).toStrictEqual({ type: 'cancelled' });
    });

    it('should take the usage off the event and add it to the sums, before the usage of TOKEN_USAGE', () => {
      const lifecycle = started();
      lifecycle.addUsage({ inputTokens: 1, provider: 'b' });
      const event = lifecycle.finished({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: 2, provider: 'a' }] });
      expect(event).not.toHaveProperty('usage');

      lifecycle.end(event);

      expect(event.usage).toStrictEqual([
        { provider: 'a', inputTokens: 2 },
        { provider: 'b', inputTokens: 1 },
      ]);
    });

    it('should throw INVALID_EVENT for an outcome that is not an object, rather than fail on it later', () => {
      const lifecycle = started();

      expect(thrown(() => lifecycle.finished({ type: EventType.RUN_FINISHED, outcome: null })).code).toBe('INVALID_EVENT');
      expect(lifecycle.ended).toBe(false);
    });
  });

  describe('upstreamError', () => {
    it('should keep the message and code and move the usage to the sums', () => {
      const lifecycle = started();

      const event = lifecycle.upstreamError({ type: EventType.RUN_ERROR, message: 'Rate limited', code: '429', usage: [{ outputTokens: 3 }] });
      expect(event).toStrictEqual({ type: EventType.RUN_ERROR, message: 'Rate limited', code: '429' });
      lifecycle.end(event);

      expect(event.usage).toStrictEqual([{ outputTokens: 3 }]);
    });

    it('should give a blank message one', () => {
      expect(started().upstreamError({ type: EventType.RUN_ERROR, message: '  ' }).message).toBe('The agent reported an error without a message.');
    });

    it('should throw INVALID_EVENT for an invalid usage rather than drop it', () => {
      expect(thrown(() => started().upstreamError({ type: EventType.RUN_ERROR, message: 'x', usage: [{ inputTokens: -1 }] })).code).toBe('INVALID_EVENT');
    });
  });

  describe('failed', () => {
    it('should send the stack only when the run exposes it', () => {
      const error = new Error('boom');

      expect(started().failed(error)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'boom' });
      expect(started({ ...ids, exposeErrorStack: true }).failed(error)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'boom', metadata: { stack: error.stack } });
    });
  });

  describe('end', () => {
    it('should mark the run ended and close what is open, innermost first', () => {
      const lifecycle = started();
      lifecycle.admit({ type: EventType.STEP_STARTED, stepName: 'plan' }, EventType.STEP_STARTED);
      lifecycle.admit({ type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' }, EventType.TOOL_CALL_START);

      const ending = lifecycle.end(lifecycle.finished());

      expect(lifecycle.ended).toBe(true);
      expect(ending).toStrictEqual({
        closers: [
          { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
          { type: EventType.STEP_FINISHED, stepName: 'plan' },
        ],
      });
    });

    it('should close subagents with SUBAGENT_ERROR carrying the message when the run ends with RUN_ERROR', () => {
      const lifecycle = started();
      lifecycle.admit({ type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'researcher' }, EventType.SUBAGENT_STARTED);

      expect(lifecycle.end(lifecycle.failed(new Error('Search backend down'))).closers).toStrictEqual([
        { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-1', message: 'Search backend down' },
      ]);
    });

    it('should set no usage when none was reported', () => {
      const lifecycle = started();
      const terminal = lifecycle.finished();

      lifecycle.end(terminal);

      expect(terminal).not.toHaveProperty('usage');
    });

    it('should sum the usage per provider and model onto the terminal event', () => {
      const lifecycle = started();
      lifecycle.addUsage({ inputTokens: 10, outputTokens: 2, provider: 'openai', model: 'gpt' });
      lifecycle.addUsage([{ inputTokens: 5, provider: 'openai', model: 'gpt' }, { inputTokens: 7 }]);
      const terminal = lifecycle.finished();

      expect(lifecycle.end(terminal).diagnostic).toBeUndefined();
      expect(terminal.usage).toStrictEqual([{ provider: 'openai', model: 'gpt', inputTokens: 15, outputTokens: 2 }, { inputTokens: 7 }]);
    });

    it('should leave out a usage sum past MAX_SAFE_INTEGER, with a diagnostic naming the reports', () => {
      const lifecycle = started();
      lifecycle.addUsage({ inputTokens: Number.MAX_SAFE_INTEGER });
      lifecycle.addUsage({ inputTokens: 1 });
      const terminal = lifecycle.finished();

      const { diagnostic } = lifecycle.end(terminal);

      expect(terminal).not.toHaveProperty('usage');
      expect(diagnostic).toStrictEqual({
        message: "Left out the run's token usage: its sum is past 9007199254740991 tokens, more than AG-UI can carry. Check the counts your agent reports.",
        event: [{ inputTokens: Number.MAX_SAFE_INTEGER }, { inputTokens: 1 }],
      });
    });
  });

  it('should keep each run apart', () => {
    const first = started();
    first.admit({ type: EventType.STEP_STARTED, stepName: 'plan' }, EventType.STEP_STARTED);
    first.addUsage({ inputTokens: 1 });
    const second = started();
    const terminal = second.finished();

    expect(second.end(terminal).closers).toStrictEqual([]);
    expect(terminal).not.toHaveProperty('usage');
    expect(first.ended).toBe(false);
  });
});

describe('usageReports', () => {
  it('should take one report or a list of them', () => {
    expect(usageReports({ inputTokens: 1 })).toStrictEqual([{ inputTokens: 1 }]);
    expect(usageReports([{ inputTokens: 1 }, { outputTokens: 2 }])).toStrictEqual([{ inputTokens: 1 }, { outputTokens: 2 }]);
  });

  it('should throw INVALID_EVENT for a report that is not an object', () => {
    for (const [value, described] of [[null, 'null'], [7, 'number 7'], [[[]], 'an array of 0']] as const) {
      const error = thrown(() => usageReports(value));
      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toBe(`TOKEN_USAGE has 'usage: ${described}', but usage must be a TokenUsage object (or an array of them), e.g. { inputTokens: 12, outputTokens: 30 }.`);
    }
  });

  it('should throw INVALID_EVENT for a count that is not a non-negative integer, whatever its place in the list', () => {
    const error = thrown(() => usageReports([{ inputTokens: 1 }, { outputTokens: 1.5 }]));

    expect(error.code).toBe('INVALID_EVENT');
    expect(error.message).toMatch(/^TOKEN_USAGE has an invalid usage entry: .*\. Counts are non-negative integers, e\.g\. \{ inputTokens: 12, outputTokens: 30 \}\.$/);
  });
});

describe('sumTokenUsage', () => {
  it('should sum per (provider, model) in first-seen order, without undefined provider or model fields', () => {
    expect(
      sumTokenUsage([
        { inputTokens: 1, provider: 'openai', model: 'a' },
        { inputTokens: 2, provider: 'openai', model: 'b' },
        { inputTokens: 3 },
        { inputTokens: 4, outputTokens: 1, provider: 'openai', model: 'a' },
      ]),
    ).toStrictEqual([
      { provider: 'openai', model: 'a', inputTokens: 5, outputTokens: 1 },
      { provider: 'openai', model: 'b', inputTokens: 2 },
      { inputTokens: 3 },
    ]);
  });

  it('should give undefined when a sum passes MAX_SAFE_INTEGER', () => {
    expect(sumTokenUsage([{ outputTokens: Number.MAX_SAFE_INTEGER }, { outputTokens: 1 }])).toBeUndefined();
  });
});

describe('runErrorOf', () => {
  it("should keep an error's message, and its code as a string", () => {
    expect(runErrorOf(new AguiRxError('INVALID_EVENT', 'Bad event'), false)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'Bad event', code: 'INVALID_EVENT' });
    expect(runErrorOf({ message: 'Too many requests', code: 429 }, false)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'Too many requests', code: '429' });
  });

  it('should leave out a code that is neither a string nor a number', () => {
    expect(runErrorOf({ message: 'x', code: { nested: true } }, false)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'x' });
  });

  it('should take a string error as the message, and describe any other value', () => {
    expect(runErrorOf('timeout', false).message).toBe('timeout');
    expect(runErrorOf(42, false).message).toBe('Agent failed with number 42');
    expect(runErrorOf(undefined, false).message).toBe('Agent failed with undefined');
  });

  it("should say how to pass on an OpenAI stream's [DONE] that went to JSON.parse, and only for that SyntaxError", async () => {
    const parsed = () => JSON.parse('[DONE]') as unknown;
    let thrown: unknown;
    try {
      parsed();
    } catch (error) {
      thrown = error;
    }
    expect(runErrorOf(thrown, false).message).toBe(
      `${(thrown as Error).message}. It looks like the \`data: [DONE]\` that ends an OpenAI Chat Completions stream went to JSON.parse: pass it on as the string, map((message) => (message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data))), and fromOpenAIChatCompletions() reads it as the stream's end.`,
    );
    expect(runErrorOf(new SyntaxError('Unexpected token } in JSON'), false).message).toBe('Unexpected token } in JSON');
    expect(runErrorOf(new Error('"[DONE]" came too early'), false).message).toBe('"[DONE]" came too early');
    // Through a pipeline, as a user writes it: the run's RUN_ERROR, judged by the official client.
    const sse = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n';
    const run = runWithOracle(of(sse).pipe(parseSSE(), map((message) => JSON.parse(message.data) as ChatCompletionChunk), fromOpenAIChatCompletions(), toAgui({ threadId: 'thread-1', runId: 'run-1', onError: () => {} })));
    const { events, messages } = await run;
    expect(messages).toEqual([{ id: 'c1', role: 'assistant', content: 'Hi' }]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: expect.stringMatching(/"\[DONE\]" is not valid JSON\. It looks like the `data: \[DONE\]` that ends an OpenAI Chat Completions stream went to JSON\.parse/) });
  });

  it('should give an empty message one', () => {
    expect(runErrorOf(new Error(''), false).message).toBe('The agent failed without an error message.');
  });

  it('should read past fields whose getters throw', () => {
    const hostile = {
      get message(): string {
        throw new Error('no');
      },
      get code(): string {
        throw new Error('no');
      },
    };

    expect(runErrorOf(hostile, true)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'Agent failed with an object' });
  });

  it('should send the stack as metadata only when asked, and only when it is a string', () => {
    expect(runErrorOf({ message: 'x', stack: 'at f (a.ts:1)' }, true)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'x', metadata: { stack: 'at f (a.ts:1)' } });
    expect(runErrorOf({ message: 'x', stack: 'at f (a.ts:1)' }, false)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'x' });
    expect(runErrorOf({ message: 'x', stack: 7 }, true)).toStrictEqual({ type: EventType.RUN_ERROR, message: 'x' });
  });
});
