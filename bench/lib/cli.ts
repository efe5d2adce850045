// What the bench's diagnostic scripts (wake, saturation, construct, perf-windows) share on their command line.

/** @returns the value of `--<name>=<value>` on the command line, or `fallback` */
export const arg = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** @returns the numbers of `--<name>=a,b,c` on the command line, or of `fallback` (empty: none) */
export const argList = (name: string, fallback: string): number[] => arg(name, fallback).split(",").filter(Boolean).map(Number);

/**
 * Quiets wrangler for a diagnostic (no logs, no metrics) and turns its local observability off,
 * which would record every WebSocket message in the measured process (bench/README.md). Values
 * already set in the environment are kept. Call before `startBenchWorker`.
 */
export function quietWrangler(): void {
  process.env.WRANGLER_LOG ??= "none";
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
}
