// The timed windows `bench/wake.ts --windows` and `bench/saturation.ts --windows` write, as the
// perf readers (perf-windows.ts, perf-offcpu.ts) look samples and switches up in them.
import { readFileSync } from "node:fs";

/** A timed window: its room, start and end (seconds of CLOCK_MONOTONIC), and the replies in it (saturation). */
export type Window = [room: string, start: number, end: number, replies?: number];

/** The windows of one file, sorted by start, and the lookup of the one holding a time. */
export interface Windows {
  readonly list: readonly Window[];
  /** @returns the window holding `time`, or undefined (a binary search: the windows do not overlap) */
  at(time: number): Window | undefined;
}

/** @param path - a windows file */
export function readWindows(path: string): Windows {
  const list = (JSON.parse(readFileSync(path, "utf8")) as Window[]).sort((a, b) => a[1] - b[1]);
  const starts = list.map((w) => w[1]);
  return {
    list,
    at(time) {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if ((starts[mid] as number) <= time) lo = mid + 1;
        else hi = mid - 1;
      }
      const window = list[hi];
      return window && time <= window[2] ? window : undefined;
    },
  };
}
