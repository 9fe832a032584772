/**
 * The agent the examples serve: a scripted weather assistant that needs no key and no network.
 *
 * An agent is `(input, { signal }) => Observable<AgentEvent>`: it says what it knows (text chunks,
 * a tool call and its result, its whole state) and leaves ids, END events and the run lifecycle to
 * `toAgui`. A real agent would call its model here with `fetch(url, { signal })`, so that a client
 * that goes away cancels the request.
 */
import type { AgentEvent, AguiAgent } from 'agui-rx';
import { from } from 'rxjs';

/** Answers "what is the weather in <city>?" with one tool call, a state change and two texts. */
export const weatherAgent: AguiAgent = (input) => {
  const last = input.messages.at(-1);
  const question = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
  const city = /in ([A-Z][\w-]*)/.exec(question)?.[1] ?? 'Oslo';
  return from<AgentEvent[]>([
    { type: 'TEXT_MESSAGE_CHUNK', delta: 'Checking ' },
    { type: 'TEXT_MESSAGE_CHUNK', delta: 'the weather.' },
    { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-1', toolCallName: 'weather', delta: JSON.stringify({ city }) },
    { type: 'TOOL_CALL_RESULT', toolCallId: 'call-1', content: { city, celsius: -3 } },
    { type: 'STATE_SNAPSHOT', snapshot: { ...(input.state as object), lastCity: city } },
    { type: 'TEXT_MESSAGE_CHUNK', delta: `It is -3°C in ${city}.` },
  ]);
};
