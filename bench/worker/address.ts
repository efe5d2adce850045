// How the bench workers address their objects.

/**
 * The object named `name`, addressed by an id that does not carry the name. wrangler's local dev
 * wraps every SQLite-backed Durable Object class (miniflare's object wrapper, for its data
 * explorer; `X_LOCAL_EXPLORER=false` does not turn it off), and when the id carries a name the
 * wrapper's constructor writes that name to SQLite inside `blockConcurrencyWhile`: about 1 ms on
 * every construction, so on every wake, that no deployed object pays. The same name always
 * gives the same object.
 */
export function objectNamed<T extends Rpc.DurableObjectBranded | undefined>(namespace: DurableObjectNamespace<T>, name: string): DurableObjectStub<T> {
  return namespace.get(namespace.idFromString(namespace.idFromName(name).toString()));
}
