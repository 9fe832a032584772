import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { describeRunStore } from './runStoreConformance.js';

describeRunStore('createMemoryRunStore', {
  make: (options) => createMemoryRunStore({ retainMs: options?.retainMs, maxLen: options?.maxLen }),
  // One process: the "other instance" is the store itself.
  peer: (store) => store,
  aheadCursor: () => '999999999999',
  // Sequence numbers are read as numbers: past the safe integers two cursors could read as one.
  lastCursor: String(Number.MAX_SAFE_INTEGER),
  beyondCursors: [String(Number.MAX_SAFE_INTEGER + 1), '9999999999999999'],
});
