/**
 * Something an operator dropped or repaired on purpose, so that the stream stays well-formed
 * (a late TOOL_CALL_ARGS after its TOOL_CALL_END, a duplicate START, an END for nothing open).
 * Nothing is dropped silently: each such case is reported here.
 */
export interface AguiDiagnostic {
  /** What happened, why, and what the producer should do instead. */
  message: string;
  /** The input event concerned. */
  event: unknown;
}

/** Receives each {@link AguiDiagnostic}. */
export type DiagnosticHandler = (diagnostic: AguiDiagnostic) => void;

/** The default handler: one `console.warn` line per diagnostic. */
export const warnDiagnostic: DiagnosticHandler = (diagnostic) => {
  console.warn(`[agui-rx] ${diagnostic.message}`);
};
