import { onTestFinished, vi } from "vitest";

/** What a test captured from the console: one line per call, its arguments joined with spaces. */
export type CapturedConsole = { error: string[]; warn: string[]; info: string[] };

/**
 * Silences console.error, console.warn and console.info for the rest of the current test and
 * records them instead, so a test that makes dokit log on purpose asserts on the lines rather
 * than printing them. An Error argument appears as `Name: message`, without its stack.
 * Durable Objects of the test worker share its console, so their logs are captured too.
 * @returns the captured lines, filled as the test runs; restored when the test finishes
 */
export function captureConsole(): CapturedConsole {
  const captured: CapturedConsole = { error: [], warn: [], info: [] };
  for (const level of ["error", "warn", "info"] as const) {
    const spy = vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      captured[level].push(args.map(String).join(" "));
    });
    onTestFinished(() => spy.mockRestore());
  }
  return captured;
}
