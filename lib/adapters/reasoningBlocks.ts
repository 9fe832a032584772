import { EventType } from '@ag-ui/core';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { isObject } from './readers.js';

/**
 * The reasoning messages of one assistant message, as `fromAiSdkStream` and the LangChain adapters
 * send them: one per reasoning block (the AI SDK's part `id`, LangChain's block `index`), with
 * Anthropic's signature or redacted data as its REASONING_ENCRYPTED_VALUE, as `fromAnthropicMessages`
 * sends a thinking block's. Not part of the public API.
 */

/** The reasoning blocks of one assistant message. @internal */
export interface ReasoningBlocks {
  /** Text of the block `key` names; without a key, of the current block (the first: `<owner>-reasoning`). */
  text(owner: string, key: string | undefined, delta: string): void;
  /** A block's signature or redacted data, if there is one; a redacted block is always a block of its own. */
  encrypted(owner: string, key: string | undefined, value: EncryptedReasoning | undefined): void;
  /** The message is over: its next reasoning is a new block. */
  reset(): void;
}

/** Anthropic's encrypted form of a thinking block: its signature, or the data of a redacted one. */
export interface EncryptedReasoning {
  kind: 'signature' | 'redacted';
  value: string;
}

/** What an AI SDK part's `providerMetadata.anthropic` carries of its thinking block: `redactedData`, else `signature`. @internal */
export function aiSdkAnthropicReasoning(providerMetadata: unknown): EncryptedReasoning | undefined {
  const anthropic = isObject(providerMetadata) ? providerMetadata.anthropic : undefined;
  if (!isObject(anthropic)) return undefined;
  if (typeof anthropic.redactedData === 'string' && anthropic.redactedData !== '') return { kind: 'redacted', value: anthropic.redactedData };
  if (typeof anthropic.signature === 'string' && anthropic.signature !== '') return { kind: 'signature', value: anthropic.signature };
  return undefined;
}

/** One reasoning block: its key, its reasoning message, whether that was started, and the encrypted value sent. */
interface Block {
  key: string | undefined;
  messageId: string;
  started: boolean;
  sent?: string;
}

/** The reasoning blocks of one message (or of each in turn, with `reset`). @internal */
export function createReasoningBlocks(emit: (event: AgentEvent) => void): ReasoningBlocks {
  // The message's current block: its key, its reasoning message, whether that was started, and the value sent.
  let block: Block | undefined;
  // Blocks of the message so far: the first is `<owner>-reasoning`, the next `<owner>-reasoning-2` …
  let count = 0;
  // The keyed blocks of the message, made at the second: a piece of an earlier block (interleaved
  // blocks, a signature at a block's end) goes to that block, not to a new one.
  let keyed: Map<string, Block> | undefined;

  // A keyed piece after keyless ones (LangChain's reasoning_content, then a thinking block) continues their block.
  const blockOf = (owner: string, key: string | undefined, fresh = false): Block => {
    if (!fresh && key !== undefined && block !== undefined && block.key !== key) {
      const earlier = keyed?.get(key);
      if (earlier !== undefined) {
        if (block.key !== undefined) keyed!.set(block.key, block);
        return (block = earlier);
      }
    }
    if (block === undefined || fresh || (key !== undefined && block.key !== undefined && block.key !== key)) {
      if (block?.key !== undefined) (keyed ??= new Map()).set(block.key, block);
      count++;
      block = { key, messageId: count === 1 ? `${owner}-reasoning` : `${owner}-reasoning-${count}`, started: false };
    }
    block.key ??= key;
    return block;
  };

  return {
    text(owner, key, delta) {
      const current = blockOf(owner, key);
      current.started = true;
      emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: current.messageId, delta });
    },
    encrypted(owner, key, encrypted) {
      if (encrypted === undefined) return;
      let current = blockOf(owner, key);
      // The UI stream repeats a block's metadata on its start and end parts.
      if (current.sent === encrypted.value) return;
      // Redacted thinking has no text: after another block's text or signature, it is a block of its own.
      if (encrypted.kind === 'redacted' && current.started) current = blockOf(owner, key, true);
      if (!current.started) {
        const metadata = encrypted.kind === 'redacted' ? { metadata: { anthropic: { type: 'redacted_thinking' } } } : {};
        emit({ type: EventType.REASONING_MESSAGE_START, messageId: current.messageId, role: 'reasoning', ...metadata });
      }
      current.started = true;
      current.sent = encrypted.value;
      emit({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: current.messageId, encryptedValue: encrypted.value });
    },
    reset() {
      block = undefined;
      count = 0;
      keyed = undefined;
    },
  };
}
