// What the workerd projects' output filter (test/deliberate-errors.ts) drops: workerd's reports
// of errors the tests cause on purpose, and nothing else.
import { describe, expect, it } from "vitest";
import { isDeliberate } from "../test/deliberate-errors";

describe("the deliberate-errors filter", () => {
  it("drops workerd's reports of aborts and faults whose message starts with 'test: ', and the listed asserted refusal", () => {
    for (const line of [
      "uncaught exception; exception = workerd/api/actor-state.c++:1249: failed: broken.outputGateBroken; jsg.Error: test: reset\n",
      "exception = workerd/api/actor-state.c++:1249: failed: broken.outputGateBroken; jsg.Error: test: storage lost\n",
      "uncaught exception; source = Uncaught (in promise); stack = Error: test: injected fault (publish refused)\n",
      "uncaught exception; source = Uncaught (in promise); stack = DokitError: dokit: a room message is over 1048576 bytes as JSON (one row of the log holds it)\n",
      "exception = kj/compat/http.c++:4365: disconnected: other end of WebSocketPipe was destroyed\n",
    ]) {
      expect(isDeliberate(line), line).toBe(true);
    }
  });

  it("keeps every other report, dokit's own errors included", () => {
    for (const line of [
      "uncaught exception; exception = workerd/api/actor-state.c++:1249: failed: broken.outputGateBroken; jsg.Error: boom\n",
      "uncaught exception; source = Uncaught (in promise); stack = DokitError: dokit: the room did not take a publish\n",
      "uncaught exception; source = Uncaught (in promise); stack = TypeError: Cannot read properties of undefined (reading 'test: ')\n",
      "dokit: delivery to room shard r#1 failed (1 in a row); the sequencer's alarm retries it Error: test: injected fault\n",
      "stack: /path/to/workerd@3a4d6a0\n",
    ]) {
      expect(isDeliberate(line), line).toBe(false);
    }
  });
});
