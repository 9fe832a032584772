import type { Message } from '@ag-ui/core';
import { joinInstructions } from './converterInternals.js';

/** What {@link splitSystemMessages} returns. */
export interface SplitSystemMessages {
  /** The `system` and `developer` messages' content, in order, joined by a blank line; absent when there is none. */
  system?: string | undefined;
  /** Every other message, in order. */
  messages: Message[];
}

/**
 * Splits the `system` and `developer` messages out of an AG-UI conversation, for providers that
 * take instructions beside the conversation rather than in it (Anthropic's `system`, the
 * Responses API's `instructions`, or a Chat Completions request built that way).
 *
 * Instructions are gathered from anywhere in the list, in order, and joined by a blank line;
 * empty ones are skipped.
 *
 * ## Example
 *
 * ```ts
 * const { system, messages } = splitSystemMessages([
 *   { id: 's1', role: 'system', content: 'Be brief.' },
 *   { id: 'd1', role: 'developer', content: 'Answer in French.' },
 *   { id: 'u1', role: 'user', content: 'Hi' },
 * ]);
 * console.log(JSON.stringify({ system, ids: messages.map((message) => message.id) }));
 * // results: {"system":"Be brief.\n\nAnswer in French.","ids":["u1"]}
 * ```
 *
 * @param messages The AG-UI messages, oldest first.
 * @return The joined instructions (absent when none), and the other messages.
 */
export function splitSystemMessages(messages: readonly Message[]): SplitSystemMessages {
  const instructions: string[] = [];
  const rest: Message[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') instructions.push(message.content);
    else rest.push(message);
  }
  const system = joinInstructions(instructions);
  return system === undefined ? { messages: rest } : { system, messages: rest };
}
