// Test-only: `POST /evict/<name>` evicts that object the way hibernation does (the instance goes;
// storage and its WebSockets stay), with `workerd:unsafe` (compatibility flag unsafe_module).
// The loopback Workers (worker.ts, context/no-context.ts) answer it before their routing.

type Unsafe = { evict(stub: DurableObjectStub, options: { webSockets: "hibernate" }): Promise<void> };
const UNSAFE = ["workerd", "unsafe"].join(":"); // joined, so no bundler looks for it

/** @returns "evicted" after evicting the named object of `namespace`, or `undefined` for any other request */
export async function evictRoute(request: Request, namespace: DurableObjectNamespace): Promise<Response | undefined> {
  const [, action, name] = new URL(request.url).pathname.split("/");
  if (action !== "evict" || request.method !== "POST" || !name) return undefined;
  const { default: unsafe } = (await import(UNSAFE)) as { default: Unsafe };
  await unsafe.evict(namespace.getByName(name), { webSockets: "hibernate" });
  return new Response("evicted");
}
