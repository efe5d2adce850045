// Type-level tests for AgentStub<T> and the typed call(). Checked by `tsc`
// (the package's typecheck script); at run time expectTypeOf is a no-op.
import { describe, expectTypeOf, it } from "vitest";
import type { AgentCall, AgentClient, AgentClientStub, AgentStub, UntypedAgentStub } from "../src/client";
import type { Counter, ScenarioCallables } from "./worker.callables";

class Plain {
  count = 1;
  readonly label: string = "x";
  sync(a: number, b: string): boolean {
    return a > 0 && b !== "";
  }
  async later(): Promise<{ ok: true }> {
    return { ok: true };
  }
  optional(value?: number): number {
    return value ?? 0;
  }
  thenable(): PromiseLike<string> {
    return Promise.resolve("deep");
  }
  [Symbol.iterator](): Iterator<number> {
    return [1][Symbol.iterator]();
  }
}

describe("AgentStub<T>", () => {
  it("maps each method to an async function with the same arguments", () => {
    type Stub = AgentStub<Plain>;
    expectTypeOf<Stub["sync"]>().toEqualTypeOf<(a: number, b: string) => Promise<boolean>>();
    expectTypeOf<Stub["later"]>().toEqualTypeOf<() => Promise<{ ok: true }>>();
    expectTypeOf<Stub["optional"]>().toEqualTypeOf<(value?: number) => Promise<number>>();
    expectTypeOf<Stub["thenable"]>().toEqualTypeOf<() => Promise<string>>();
  });

  it("leaves out fields and symbol-keyed members", () => {
    expectTypeOf<keyof AgentStub<Plain>>().toEqualTypeOf<"sync" | "later" | "optional" | "thenable">();
  });

  it("types an RpcTarget callables class", () => {
    type Stub = AgentStub<ScenarioCallables>;
    expectTypeOf<Stub["add"]>().toEqualTypeOf<(a: number, b: number) => Promise<number>>();
    expectTypeOf<Stub["countdown"]>().returns.toEqualTypeOf<Promise<ReadableStream<number>>>();
    expectTypeOf<Stub["counter"]>().returns.toEqualTypeOf<Promise<Counter>>();
    expectTypeOf<Stub["fail"]>().returns.toEqualTypeOf<Promise<never>>();
    // @ts-expect-error: not a method of the class
    type Missing = Stub["nope"];
  });

  it("rejects wrong arguments", () => {
    const stub = {} as AgentStub<Plain>;
    // @ts-expect-error: the second argument must be a string
    void (() => stub.sync(1, 2));
    // @ts-expect-error: missing argument
    void (() => stub.sync(1));
  });

  it("is untyped without a callables type", () => {
    expectTypeOf<AgentClientStub<unknown>>().toEqualTypeOf<UntypedAgentStub>();
    expectTypeOf<AgentClient["stub"]>().toEqualTypeOf<UntypedAgentStub>();
    expectTypeOf<AgentClient<Plain>["stub"]>().toEqualTypeOf<AgentStub<Plain>>();
  });

  it("types call() by method name", () => {
    const call = (() => Promise.resolve()) as unknown as AgentCall<Plain>;
    expectTypeOf(call("sync", [1, "a"])).toEqualTypeOf<Promise<boolean>>();
    expectTypeOf(call("later", [])).toEqualTypeOf<Promise<{ ok: true }>>();
    // @ts-expect-error: unknown method
    void (() => call("nope", []));
    // @ts-expect-error: wrong arguments
    void (() => call("sync", ["a", 1]));
    const untyped = (() => Promise.resolve()) as unknown as AgentCall<unknown>;
    expectTypeOf(untyped<number>("anything", [1, 2])).toEqualTypeOf<Promise<number>>();
  });
});
