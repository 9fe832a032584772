import { EventType } from '@ag-ui/core';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { isObject } from './readers.js';

/**
 * The reasoning messages of `fromAiSdkStream`: one per reasoning block (the parts of one `id`),
 * with the Anthropic signature or redacted data the AI SDK carries in `providerMetadata` as its
 * REASONING_ENCRYPTED_VALUE, as `fromAnthropicMessages` sends a thinking block's. Not part of the
 * public API.
 */

/** The reasoning blocks of one assistant message. @internal */
export interface AiSdkReasoning {
  /** Text of the block `partId` names (AI SDK 4's parts have none: one block). */
  text(owner: string, partId: string | undefined, delta: string): void;
  /** A block's signature or redacted data, if its part carries one (`providerMetadata.anthropic`, AI SDK 4's `signature` / `data`). */
  encrypted(owner: string, partId: string | undefined, value: EncryptedReasoning | undefined): void;
  /** The message is over: its next reasoning is a new block. */
  reset(): void;
}

/** Anthropic's encrypted form of a thinking block: its signature, or the data of a redacted one. */
export interface EncryptedReasoning {
  kind: 'signature' | 'redacted';
  value: string;
}

/** What a part's `providerMetadata.anthropic` carries of its thinking block: `redactedData`, else `signature`. @internal */
export function anthropicReasoning(providerMetadata: unknown): EncryptedReasoning | undefined {
  const anthropic = isObject(providerMetadata) ? providerMetadata.anthropic : undefined;
  if (!isObject(anthropic)) return undefined;
  if (typeof anthropic.redactedData === 'string' && anthropic.redactedData !== '') return { kind: 'redacted', value: anthropic.redactedData };
  if (typeof anthropic.signature === 'string' && anthropic.signature !== '') return { kind: 'signature', value: anthropic.signature };
  return undefined;
}

/** The reasoning tracker of one subscription. @internal */
export function createAiSdkReasoning(emit: (event: AgentEvent) => void): AiSdkReasoning {
  // The message's current block: its part id, its reasoning message, whether that was started, and the value sent.
  let block: { partId: string | undefined; messageId: string; started: boolean; sent?: string } | undefined;
  // Blocks of the message so far: the first is `<owner>-reasoning`, the next `<owner>-reasoning-2` …
  let count = 0;

  const blockOf = (owner: string, partId: string | undefined) => {
    if (block === undefined || block.partId !== partId) {
      count++;
      block = { partId, messageId: count === 1 ? `${owner}-reasoning` : `${owner}-reasoning-${count}`, started: false };
    }
    return block;
  };

  return {
    text(owner, partId, delta) {
      const current = blockOf(owner, partId);
      current.started = true;
      emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: current.messageId, delta });
    },
    encrypted(owner, partId, encrypted) {
      if (encrypted === undefined) return;
      const current = blockOf(owner, partId);
      // The UI stream repeats a block's metadata on its start and end parts.
      if (current.sent === encrypted.value) return;
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
    },
  };
}
