import type { AssistantMessage, Message, ToolCall, ToolMessage } from '@ag-ui/core';
import type { ConverterWarning } from './converterInternals.js';

/**
 * How the message converters pair tool calls with their results, and give each call an id of its
 * own in the request. Not part of the public API.
 */

/** The `error` of the result a converter sends for a tool call that no tool message answers. */
export const UNANSWERED_CALL_ERROR = 'the call did not complete, and no result was returned for it.';

/** What {@link pairToolResults} gives: the messages to convert, and the tool messages among them that answer no earlier call. */
export interface PairedMessages {
  readonly messages: readonly Message[];
  /** The tool messages that answer no call of an earlier assistant message (kept in place). */
  readonly orphans: ReadonlySet<ToolMessage>;
  /** Those of them whose call an assistant message after them makes: the id of the first such message. */
  readonly early: ReadonlyMap<ToolMessage, string>;
}

/**
 * Whether a converter drops a tool message that {@link pairToolResults} found answering no call of
 * an earlier assistant message, with a warning. Every API refuses a result that comes before its
 * call; Chat Completions and Anthropic Messages, which keep no state, refuse one without its call
 * too. The Responses API (`keepsUnmatched`) takes a result whose call is in no message: the call
 * may be in the `previous_response_id` response.
 */
export function isOrphanResult(converter: string, message: ToolMessage, paired: PairedMessages, warn: ConverterWarning, keepsUnmatched = false): boolean {
  const later = paired.early.get(message);
  if (later !== undefined) {
    warn(
      `${converter} dropped tool message '${message.id}': it answers tool call '${message.toolCallId}', which assistant message '${later}' makes only after it, and a result answers a call made before it (the API takes a call's result only after the call). Put the tool message after the assistant message with the call.`,
    );
    return true;
  }
  if (!paired.orphans.has(message) || keepsUnmatched) return false;
  warn(`${converter} dropped tool message '${message.id}': it answers tool call '${message.toolCallId}', which no earlier assistant message made, and the API refuses a result without its call. Keep the assistant message with the call in the history, or leave the result out.`);
  return true;
}

/**
 * The conversation with each tool call's results directly after the assistant message that made
 * the call, as every API wants them: Chat Completions refuses a call whose tool messages do not
 * directly follow it, Anthropic one whose `tool_result` is not in the very next user turn, and the
 * Responses API a `function_call` without its `function_call_output`.
 *
 * 1. A tool message answers the latest call of its id made before it: of the latest assistant
 *    message before it that made a call of that id, the first such call without a result yet. It is
 *    moved to directly after that message, in the order the results came, past any user, system or
 *    assistant message between them.
 * 2. A call that no tool message answers gets a failed result of its own after them, a tool
 *    message with `error` {@link UNANSWERED_CALL_ERROR}, with a warning. A run cut or stopped mid-call,
 *    or a client tool left unanswered, leaves such a call, and no API takes one, not even at the end
 *    of the conversation. A failed result rather than leaving the call out: the model still sees
 *    what it tried and that it did not complete, and thinking or reasoning sent back with the call
 *    keeps what followed it.
 * 3. A second tool message for one call is dropped, with a warning: the first result stands (Anthropic
 *    refuses two `tool_result` blocks for one `tool_use`).
 * 4. A call whose id an earlier call has (servers that number calls per response reuse `call_0`; a
 *    message may name one id twice) is sent under a new id, `<id>_2` (or the next number no call
 *    has), and so are the results that answer it, with a warning: Anthropic refuses a request that
 *    names one `tool_use` id twice, and the OpenAI APIs could not tell the calls' results apart.
 * 5. Every other message keeps its place, a tool message that answers no earlier call too (in
 *    `orphans`; in `early` as well when its call comes after it): each converter decides with
 *    {@link isOrphanResult} whether its API takes one.
 *
 * @param converter The converter's name, for the warnings.
 * @param messages The AG-UI messages, oldest first.
 * @param warn Where the warnings go.
 * @param answeredByProvider Whether a call is one the provider ran and answers itself (Anthropic's
 *    server tools): it gets no failed result, nor is a second answer to it dropped: the converter
 *    decides what to send for it.
 * @return The messages in the order to convert them, with the failed results added and ids made
 *    unique, and the tool messages among them that answer no earlier call.
 */
export function pairToolResults(converter: string, messages: readonly Message[], warn: ConverterWarning, answeredByProvider: (call: ToolCall) => boolean = () => false): PairedMessages {
  // The latest assistant message so far that made a call of each id (its index).
  const latest = new Map<string, number>();
  // Per assistant message (by index): its results in the order they came, each with the position of the call it answers.
  const results = new Map<number, { slot: number; message: ToolMessage }[]>();
  // The tool messages that leave their place (moved after their call, or dropped), and those that answer no earlier call.
  const moved = new Set<number>();
  const unmatched: { message: ToolMessage; index: number }[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) latest.set(call.id, index);
      results.set(index, []);
    } else if (message.role === 'tool') {
      const at = latest.get(message.toolCallId);
      if (at === undefined) return void unmatched.push({ message, index });
      moved.add(index);
      const answered = results.get(at)!;
      const calls = (messages[at] as AssistantMessage).toolCalls!;
      const firstAnswer = (slot: number) => answered.find((result) => result.slot === slot)?.message;
      const open = calls.findIndex((call, slot) => call.id === message.toolCallId && firstAnswer(slot) === undefined);
      const slot = open === -1 ? calls.findIndex((call) => call.id === message.toolCallId) : open;
      // A second result of one call (a retried tool, a history appended twice): every API takes one
      // result per call (Anthropic refuses a second), so the first stands. A provider's own calls are its converter's.
      if (open === -1 && !answeredByProvider(calls[slot])) {
        return warn(
          `${converter} dropped tool message '${message.id}': tool call '${message.toolCallId}' has a result already (tool message '${firstAnswer(slot)!.id}'), and the API takes one result per call. Keep one tool message per call.`,
        );
      }
      answered.push({ slot, message });
    }
  });
  const orphans = new Set(unmatched.map(({ message }) => message));
  const early = new Map<ToolMessage, string>();
  for (const { message, index } of unmatched) {
    const later = latest.get(message.toolCallId);
    if (later !== undefined && later > index) early.set(message, messages.slice(index).find((candidate) => candidate.role === 'assistant' && candidate.toolCalls?.some((call) => call.id === message.toolCallId))!.id);
  }
  const uniqueId = uniqueCallIds(converter, messages, warn);
  const out: Message[] = [];
  messages.forEach((message, index) => {
    if (moved.has(index)) return;
    if (message.role !== 'assistant') return void out.push(message);
    const calls = message.toolCalls ?? [];
    const ids = calls.map((call) => uniqueId(call, message.id));
    out.push(ids.every((id, slot) => id === calls[slot].id) ? message : { ...message, toolCalls: calls.map((call, slot) => (ids[slot] === call.id ? call : { ...call, id: ids[slot] })) });
    const answered = results.get(index)!;
    for (const { slot, message: result } of answered) out.push(result.toolCallId === ids[slot] ? result : { ...result, toolCallId: ids[slot] });
    calls.forEach((call, slot) => {
      if (answered.some((result) => result.slot === slot) || answeredByProvider(call)) return;
      warn(
        `${converter} sent tool call '${ids[slot]}' (${call.function.name}) of assistant message '${message.id}' with a failed result ("Error: ${UNANSWERED_CALL_ERROR}"): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`,
      );
      out.push({ id: `${message.id}-${ids[slot]}-unanswered`, role: 'tool', toolCallId: ids[slot], content: '', error: UNANSWERED_CALL_ERROR });
    });
  });
  return { messages: out, orphans, early };
}

/**
 * The id each call goes under in the request, called once per call in order: its own, or for a
 * call whose id an earlier call has, `<id>_<n>` with the first `n` from 2 that no call or result
 * has (with a warning). Anthropic takes tool ids of letters, digits, `_` and `-` only.
 */
function uniqueCallIds(converter: string, messages: readonly Message[], warn: ConverterWarning): (call: ToolCall, messageId: string) => string {
  // The ids of the messages' calls and results: a new id must be none of them.
  const taken = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) taken.add(call.id);
    else if (message.role === 'tool') taken.add(message.toolCallId);
  }
  const used = new Set<string>();
  return (call, messageId) => {
    if (!used.has(call.id)) {
      used.add(call.id);
      return call.id;
    }
    let n = 2;
    while (taken.has(`${call.id}_${n}`) || used.has(`${call.id}_${n}`)) n++;
    const id = `${call.id}_${n}`;
    used.add(id);
    warn(
      `${converter} sent tool call '${call.id}' (${call.function.name}) of assistant message '${messageId}' as '${id}', and the results that answer it with that id: an earlier call has the id '${call.id}', and a request must name each call once (Anthropic refuses a repeated tool_use id; the OpenAI APIs pair results by id). A tool message answers the latest call of its id made before it.`,
    );
    return id;
  };
}
