import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { describeRunStore } from './runStoreConformance.js';

describeRunStore('createMemoryRunStore', {
  make: (options) => createMemoryRunStore({ retainMs: options?.retainMs, maxLen: options?.maxLen }),
  // One process: the "other instance" is the store itself.
  peer: (store) => store,
  aheadCursor: () => '999999999999',
});
