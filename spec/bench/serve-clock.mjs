// A clock two processes share: milliseconds of CLOCK_MONOTONIC, the system-wide clock that
// process.hrtime reads on Linux (libuv's uv_hrtime), so that a stamp taken in the server child and
// an arrival time taken in the client child can be subtracted. Read directly at every call: an
// offset to performance.now() measured once is off by however long the process was descheduled
// between its two readings (on a loaded machine, tenths of a millisecond: negative latencies).

/** Now, in ms of the system's monotonic clock (comparable across processes of one machine). */
export const monotonicNow = () => Number(process.hrtime.bigint()) / 1e6;
