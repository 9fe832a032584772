// A clock two processes share: milliseconds of CLOCK_MONOTONIC, the system-wide clock that both
// process.hrtime and performance.now read on Linux (libuv's uv_hrtime), so that a stamp taken in
// the server child and an arrival time taken in the client child can be subtracted.
import { performance } from 'node:perf_hooks';

// performance.now() is CLOCK_MONOTONIC minus this process's origin: one hrtime reading gives the offset.
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();

/** Now, in ms of the system's monotonic clock (comparable across processes of one machine). */
export const monotonicNow = () => offset + performance.now();
