import { AbstractAgent, type AgentSubscriber } from '@ag-ui/client';
import { EventType, type BaseEvent, type Message, type RunAgentInput, type Tool } from '@ag-ui/core';
import { Observable, from, mergeMap, of } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { clientToolNames, isClientTool, toolResultsFromInput } from '../../../lib/interaction/clientTools.js';
import { toAgui } from '../../../operators/toAgui.js';
import { sequentialIds, terminals } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object', properties: {} } });
const base = { threadId: 't1', runId: 'r1', messages: [] as Message[], context: [], state: {} };

describe('clientTools', () => {
  const input = { ...base, tools: [tool('confirm'), tool('search'), tool('pick_date'), tool('confirm')] };

  describe('clientToolNames / isClientTool', () => {
    it('should list the input tools the server has none of, once each, in input order', () => {
      expect(clientToolNames(input, ['search'])).toEqual(['confirm', 'pick_date']);
      expect(clientToolNames(input, new Set(['search', 'confirm']))).toEqual(['pick_date']);
      expect(clientToolNames({ tools: [] }, ['search'])).toEqual([]);
    });

    it('should tell a client tool from a server tool and from an unknown one', () => {
      expect(isClientTool(input, ['search'], 'confirm')).toBe(true);
      expect(isClientTool(input, ['search'], 'search')).toBe(false);
      expect(isClientTool(input, new Set(['search']), 'weather')).toBe(false);
    });
  });

  describe('through toAgui', () => {
    // A server that runs its own tools and leaves calls to client tools for the client.
    const serverTools = ['search'];
    const agent = (runInput: RunAgentInput): Observable<AgentEvent> =>
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"hotels"}' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', toolCallName: 'confirm', delta: '{"hotel":"Ritz"}' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c3', toolCallName: 'pick_date', delta: '{}' },
      ]).pipe(
        mergeMap((event) => {
          const name = (event as { toolCallName: string }).toolCallName;
          if (isClientTool(runInput, serverTools, name)) return of(event);
          return of(event, { type: EventType.TOOL_CALL_RESULT, toolCallId: (event as { toolCallId: string }).toolCallId, content: { hits: 2 } } as AgentEvent);
        }),
      );
    const stream = (runInput: RunAgentInput) => agent(runInput).pipe(toAgui({ threadId: runInput.threadId, runId: runInput.runId, input: runInput, generateId: sequentialIds() }));

    it('should leave calls to client tools pending, listed in RUN_FINISHED pendingToolCallIds', async () => {
      const run = await runWithOracle((runInput) => stream({ ...runInput, tools: input.tools }));

      expect(terminals(run.events as never)).toEqual([
        { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1', outcome: { type: 'success', pendingToolCallIds: ['c2', 'c3'] } },
      ]);
      expect(run.messages.filter((message) => message.role === 'tool').map((message) => (message as { toolCallId: string }).toolCallId)).toEqual(['c1']);
    });

    it("should give the pending calls to the official client's onRunFinishedEvent", async () => {
      class StreamAgent extends AbstractAgent {
        run(runInput: RunAgentInput): Observable<BaseEvent> {
          return stream({ ...runInput, tools: input.tools });
        }
      }
      let pending: unknown;
      const subscriber: AgentSubscriber = { onRunFinishedEvent: (params) => void (pending = params.outcome === 'success' ? params.pendingToolCallIds : params.outcome) };
      await new StreamAgent({ threadId: 'thread-1' }).runAgent({ runId: 'run-1' }, subscriber);

      expect(pending).toEqual(['c2', 'c3']);
    });
  });

  describe('toolResultsFromInput', () => {
    const assistant: Message = {
      id: 'a1',
      role: 'assistant',
      toolCalls: [
        { id: 'c2', type: 'function', function: { name: 'confirm', arguments: '{}' } },
        { id: 'c3', type: 'function', function: { name: 'pick_date', arguments: '{}' } },
      ],
    };
    const user: Message = { id: 'u1', role: 'user', content: 'Book a hotel' };
    const earlier: Message = { id: 'e1', role: 'tool', toolCallId: 'c0', content: 'old' };

    it('should read the trailing tool messages, with the name of the tool each answers', () => {
      const messages: Message[] = [
        earlier,
        user,
        assistant,
        { id: 't2', role: 'tool', toolCallId: 'c2', content: 'yes' },
        { id: 't3', role: 'tool', toolCallId: 'c3', content: [{ type: 'text', text: 'May 2' }], error: 'picker closed' },
        { id: 't9', role: 'tool', toolCallId: 'c9', content: '{}' },
      ];
      expect(toolResultsFromInput({ messages })).toEqual([
        { toolCallId: 'c2', content: 'yes', toolName: 'confirm' },
        { toolCallId: 'c3', content: [{ type: 'text', text: 'May 2' }], toolName: 'pick_date', error: 'picker closed' },
        { toolCallId: 'c9', content: '{}' },
      ]);
    });

    it('should read nothing when the messages do not end with a tool message', () => {
      expect(toolResultsFromInput({ messages: [earlier, user] })).toEqual([]);
      expect(toolResultsFromInput({ messages: [user, assistant] })).toEqual([]);
      expect(toolResultsFromInput({ messages: [] })).toEqual([]);
    });

    it('should read the results a client sends back after a run left calls pending', async () => {
      const first = await runWithOracle((runInput) =>
        from<AgentEvent[]>([{ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', toolCallName: 'confirm', delta: '{"hotel":"Ritz"}' }]).pipe(
          toAgui({ threadId: runInput.threadId, runId: runInput.runId, input: runInput, generateId: sequentialIds('m-') }),
        ),
        { initialMessages: [user] },
      );
      // The client answers the pending call and starts the next run with the whole conversation.
      const next = { ...base, tools: [], messages: [...first.messages, { id: 'r2', role: 'tool', toolCallId: 'c2', content: 'approved' } as Message] };

      expect(toolResultsFromInput(next)).toEqual([{ toolCallId: 'c2', content: 'approved', toolName: 'confirm' }]);
    });
  });
});
