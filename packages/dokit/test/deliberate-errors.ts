// Global setup of the workerd projects whose tests make objects fail on purpose. workerd
// reports such a failure itself ("uncaught exception; …" or "exception = …", then its
// stack, one line each),
// which the vitest plugin prints on the vitest process's stdout or stderr, outside any
// test's console, so captureConsole cannot take it. This drops exactly the reports whose
// error is one a test causes and asserts: an abort or an injected fault whose message
// starts with "test: " (crash() in ./crash.ts checks each abort happened; the faulty
// sequencer counts its faults), and the errors in EXPECTED, each asserted by the test
// named beside it. Every other line passes through.

/** Errors a test provokes and asserts, as workerd names them after `Error: ` or `DokitError: `. */
const EXPECTED = [
  // rooms/features.test.ts "refuses a malformed publish…": publishToRoom rejects with it.
  "dokit: a room message is over 1048576 bytes as JSON",
];

/**
 * What workerd logs, without the abort's reason, when crash() aborts an object that holds
 * WebSockets: its sockets' pipes are cut (the plugin itself drops the like of it,
 * "disconnected: WebSocket peer disconnected").
 */
const CUT_BY_ABORT = "exception = kj/compat/http.c++:4365: disconnected: other end of WebSocketPipe was destroyed";

/** @returns whether `line` is workerd's first line reporting an error a test caused on purpose */
export function isDeliberate(line: string): boolean {
  if (line.startsWith(CUT_BY_ABORT)) return true;
  // "uncaught exception; exception = …" for a request the abort cut, "exception = …" for other work it cut.
  const report = /^(?:uncaught exception; )?(?:exception = .*?; jsg\.Error: |source = Uncaught \(in promise\); stack = \w*Error: )(.*)/.exec(line);
  if (!report) return false;
  const message = report[1]!;
  return message.startsWith("test: ") || EXPECTED.some((expected) => message.startsWith(expected));
}

/** @returns whether `line` continues a report: its native `stack:` line or a JavaScript frame */
const continues = (line: string) => /^(stack: |\s+at |\s*\}?\s*$)/.test(line);

/** A stream of the vitest process (this file runs in Node; the project's types are the Workers'). */
type Output = { write: (chunk: unknown, ...rest: unknown[]) => boolean };

/** Filters the vitest process's stdout and stderr for the run; the returned teardown restores them. */
export default function setup(): () => void {
  const { stdout, stderr } = (globalThis as unknown as { process: { stdout: Output; stderr: Output } }).process;
  let dropping = false;
  const restore = [stdout, stderr].map((output) => {
    const write = output.write;
    output.write = function (this: Output, chunk: unknown, ...rest: unknown[]) {
      const text = typeof chunk === "string" ? chunk : String(chunk);
      const lines = text.split(/(?<=\n)/);
      const kept = lines.filter((line) => {
        if (isDeliberate(line)) {
          dropping = true;
          return false;
        }
        if (dropping && continues(line)) return false;
        dropping = false;
        return true;
      });
      if (kept.length === lines.length) return write.call(this, chunk, ...rest);
      return write.call(this, kept.join(""), ...rest); // "" when all is dropped: a write callback still runs
    };
    return () => void (output.write = write);
  });
  return () => restore.forEach((undo) => undo());
}
