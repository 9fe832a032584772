/** `T` with its `readonly` fields writable: what a record's maker assigns once, before handing it out. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A constructor made by {@link recordType}. */
export interface RecordType<R extends object> {
  /** A record with the shared methods and no own field yet: assign every field, always in the same order. */
  new (): Writable<R>;
  /**
   * Says `record` has all its fields, and returns it. The first time, it keeps an empty record of
   * the same fields (without its objects), so that the kind's hidden class outlives its records.
   */
  shaped(record: Writable<R>): R;
}

/**
 * Makes a constructor of plain records whose prototype is `methods`: `new Record()`, then each
 * field assigned, always in the same order, then `Record.shaped(record)`, gives every record of
 * the kind one hidden class, for the life of the process.
 *
 * Why not a literal `{ __proto__: methods, … }`: V8 gives such a literal its hidden class through a
 * prototype transition that every full GC forgets, so the records made after each full GC get a
 * new class while the older ones keep theirs. Code that reads them is deoptimised at each full
 * GC, and in a server, where runs made before and after many GCs are open together, it sees more
 * and more classes until its property reads go megamorphic. A constructor's records keep their
 * class while one of them lives (up to 32 fields sit in the object, sized by V8's slack tracking), and
 * the empty record `shaped` keeps holds it when none does (a process between runs). Making one is
 * also about five times as fast (about 10 ns against 50 ns for six fields).
 *
 * @param methods The shared methods: frozen, and never changed after.
 * @return The constructor; its records have no own fields until they are assigned.
 */
export function recordType<R extends object>(methods: object): RecordType<R> {
  function RecordOfKind(this: Record<string, unknown>): void {
    // Never runs. V8 sizes a constructor's objects by the `this.… =` in its body, then trims them to
    // the fields they got (slack tracking): without these, a record keeps 10 fields in the object and
    // the rest in an array of their own, one more object and one more load per field read.
    if (reserveFields) {
      this.f0 = undefined; this.f1 = undefined; this.f2 = undefined; this.f3 = undefined; this.f4 = undefined; this.f5 = undefined; this.f6 = undefined; this.f7 = undefined;
      this.f8 = undefined; this.f9 = undefined; this.f10 = undefined; this.f11 = undefined; this.f12 = undefined; this.f13 = undefined; this.f14 = undefined; this.f15 = undefined;
      this.f16 = undefined; this.f17 = undefined; this.f18 = undefined; this.f19 = undefined; this.f20 = undefined; this.f21 = undefined; this.f22 = undefined; this.f23 = undefined;
      this.f24 = undefined; this.f25 = undefined; this.f26 = undefined; this.f27 = undefined; this.f28 = undefined; this.f29 = undefined; this.f30 = undefined; this.f31 = undefined;
    }
  }
  RecordOfKind.prototype = methods;
  let kept: object | undefined;
  RecordOfKind.shaped = (record: Writable<R>): R => {
    if (kept === undefined) kept = emptyLike(RecordOfKind as unknown as new () => Record<string, unknown>, record as Record<string, unknown>);
    return record as R;
  };
  return RecordOfKind as unknown as RecordType<R>;
}

// Room for 32 fields in each record itself (see RecordOfKind); false, as a variable the compilers keep.
const reserveFields = false as boolean;

// A record of the same fields in the same order: the same chain of hidden classes. It holds none of
// the record's objects or strings; numbers and booleans are kept, so that a number field keeps its
// representation (a field first given `undefined` would box every number written to it).
function emptyLike(Type: new () => Record<string, unknown>, record: Record<string, unknown>): object {
  const empty = new Type();
  for (const key of Object.keys(record)) {
    const value = record[key];
    empty[key] = typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
  }
  return empty;
}

// The objects keepShapes holds for the life of the process: a few small ones per module.
const keptShapes: object[] = [];

/**
 * Keeps `objects` for the life of the process, so that V8 keeps their hidden classes when no run
 * holds an object of them. Give it, at module load, one object of each shape a run makes once
 * (its options, its RUN_STARTED): made the same way (the same literal, the same fields assigned in
 * the same order), it has the same hidden class.
 *
 * Why: V8 gives a function its feedback (where a literal's class is kept) only after a few calls,
 * so the objects a run makes once get their class through transitions that every full GC forgets
 * when none of them is alive. The optimised per-event code that checks such a class is then thrown
 * away, and the next run starts on unoptimised code: after each full GC taken between runs (a
 * server idle for a while, a benchmark's GC before each run). Records made by {@link recordType}
 * need none of this; `spec/operators/toAgui.hiddenClasses.spec.ts` finds the objects that do.
 */
export function keepShapes(...objects: object[]): void {
  keptShapes.push(...objects);
}
