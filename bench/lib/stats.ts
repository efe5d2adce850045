// Percentiles, ratios and the stdout table.

/** @returns the q-quantile (0..1) of `samples` (nearest rank) */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

/** @returns the median of `values`, the mean of the middle two for an even count */
export function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[half] as number) : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
}

/** @returns the value at rank ⌊q·n⌋ of the sorted `values` (q from 0 to 1; the last for q = 1) */
export function rank(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** One figure of the report: the same statistic for each implementation. */
export interface Figure {
  /** What was measured, e.g. "echo round trip". */
  measure: string;
  /** Which statistic, e.g. "p50". */
  stat: string;
  unit: "ms" | "bytes" | "msg/s" | "µs" | "KB" | "count" | "frames/tick" | "calls/msg";
  /** Whether a larger value is better (throughput): the target is then a floor for dokit / raw. */
  higherIsBetter?: boolean;
  /** Implementation name → value. Absent when an implementation does not take part. */
  values: Partial<Record<string, number>>;
  /** Samples behind each value (count). */
  samples?: Partial<Record<string, number>>;
  /** Target for dokit / raw (e.g. 1.10; a floor such as 0.95 when `higherIsBetter`), when one is set. */
  target?: number;
  /**
   * Ratios taken round by round (each round's windows run back to back), then the median over
   * the rounds: "dokit/raw" and "dokit/ref". When present they are the figure's ratios, instead
   * of the ratio of the medians (a load burst that hits one window of a round moves one ratio,
   * and the median drops it).
   */
  paired?: { "dokit/raw"?: number; "dokit/ref"?: number };
  /** Which implementation the "ref" column holds when it is not the agents reference. */
  baselineNote?: string;
  /** What else a reader needs next to the values (a bound met, a check's outcome), printed after them. */
  note?: string;
}

/** @returns the median over rounds of a[i] / b[i] (the samples of two implementations, taken round by round) */
export function pairedRatio(a: readonly number[], b: readonly number[]): number | undefined {
  const ratios = a.flatMap((value, i) => (b[i] !== undefined && b[i] > 0 && Number.isFinite(value) ? [value / b[i]] : []));
  return ratios.length > 0 ? median(ratios) : undefined;
}

/** @returns a / b, or undefined when either is missing */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || !(b > 0)) return undefined;
  return a / b;
}

function fmt(value: number | undefined, unit: string): string {
  if (value === undefined || Number.isNaN(value)) return "-";
  if (unit === "bytes" || unit === "msg/s" || unit === "count") return `${Math.round(value)}`;
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(3);
}

const fmtRatio = (value: number | undefined): string => (value === undefined ? "-" : `${value.toFixed(2)}x`);

/** @returns the figures as an aligned text table */
export function table(figures: readonly Figure[]): string {
  const head = ["measure", "stat", "raw", "dokit", "ref", "dokit/raw", "dokit/ref", "target", ""];
  const rows = figures.map((f) => {
    const dr = f.paired?.["dokit/raw"] ?? ratio(f.values.dokit, f.values.raw);
    const miss = f.target !== undefined && dr !== undefined && (f.higherIsBetter ? dr < f.target : dr > f.target);
    return [
      f.measure,
      `${f.stat} (${f.unit})`,
      fmt(f.values.raw, f.unit),
      fmt(f.values.dokit, f.unit),
      fmt(f.values.ref, f.unit),
      fmtRatio(dr),
      fmtRatio(f.paired?.["dokit/ref"] ?? ratio(f.values.dokit, f.values.ref)),
      f.target === undefined ? "" : `${f.higherIsBetter ? ">=" : "<="} ${f.target.toFixed(2)}x`,
      (miss ? "MISSED " : "") + [f.baselineNote, f.note].filter(Boolean).join("; "),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 || i === 8 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ").trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
