/**
 * What cancels a run: an `AbortSignal`, or any object with its `aborted` flag and its 'abort'
 * listeners (the run broker's own run record, say, which spares each run an `AbortSignal`: about
 * 0.9 KB in Node, with its two listener Maps and a hidden class of its own). A listener is called
 * once, when the run is cancelled; one added after that is never called.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: CancelListener): void;
  removeEventListener(type: 'abort', listener: CancelListener): void;
}

/** An 'abort' listener of a {@link CancelSignal}: a function, or an object with `handleEvent`, as for an `EventTarget`. */
export type CancelListener = (() => void) | { handleEvent(): void };
