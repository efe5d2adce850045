// Accepting a hibernating WebSocket: the connection id, the per-connection decisions (tags,
// readonly, protocol), one open connection per id, the plug-ins' `accepted` hooks, the connect
// sequence (connect frames, then `onConnect`) and the refusal of a connection that fails while
// opening. A transport plug-in (plugin.ts `door.transport()`) reuses the id, the decisions and the connect
// sequence through its handle (transport-host.ts).
import type { Connection, ConnectionContext } from "../lifecycle/connection";
import { refuseUpgrade } from "../lifecycle/refuse";
import { CLOSE_INVALID_ID, CLOSE_OPEN_FAILED, CLOSE_REPLACED, INVALID_ID_REASON, OPEN_FAILED_REASON, REPLACED_REASON } from "../protocol/close-codes";
import { CONNECTION_ID_PARAM } from "../protocol/agents";
import { type ConnectionFlags, storeFlags } from "./attachment";
import { asConnection, flagsOf, initConnection, updateFlags } from "./connection";
import { handlerSetsWith, runHandlers } from "./handlers";
import { CONNECTING, DISPATCH, dispatchOf, installedOn, LIVE, OPTIONS, PLUGINS, REFUSED } from "./internal";
import { closeConnection, countAccepted, taggedSockets } from "./open-connections";
import type { WebSocketHandlers } from "./options";
import { connectFrames } from "./protocol-frames";
import { derivePublicId } from "./public-id";
import { connectionTags, idTag, MAX_ID_LENGTH, pluginTag, runtimeTags } from "./tags";
import type { WebSockets } from "./websockets";

/** Accepts a WebSocket upgrade (not a Cap'n Web one): 101 with the socket, or an upgrade refused with a close code. */
export async function accept(sockets: WebSockets, request: Request, url: URL): Promise<Response> {
  const id = connectionId(request, url);
  if (id === undefined) return refuseUpgrade(CLOSE_INVALID_ID, INVALID_ID_REASON);
  const pub = await derivePublicId(id);

  const { 0: client, 1: server } = new WebSocketPair();
  const ctx: ConnectionContext = { request };
  const observer = sockets[DISPATCH]?.observer;
  // `at`: when it opened (a disconnect's duration, a connection's age), kept only where events are installed.
  const at = observer && Date.now();
  const flags = connectionFlags(id, pub, request, at);
  const onConnect = handlerSetsWith(sockets, "onConnect");
  // Nothing in the connect sequence receives the connection: the socket stays as the runtime made it (isPlain).
  const plain = isPlain(sockets, onConnect);
  // SAFETY: a plain socket is only sent to and compared by identity until its first event makes it a Connection.
  const connection = plain ? (storeFlags(server, flags), server as Connection) : initConnection(server, flags);
  let accepted = false;
  try {
    const tags = plain ? flags.tags : await decide(sockets, connection, ctx);
    // No await between the replacement and the accept: one id, one open connection.
    replace(sockets, id);
    // Tagged for each plug-in that serves it (a plain socket has none): its fan-out reads the tag index.
    installedOn(sockets).ctx.acceptWebSocket(server, runtimeTags(tags, plain ? undefined : servedBy(sockets, request)));
    countAccepted(sockets);
    accepted = true;
    // In the same turn as the accept (the heartbeat's ping answer: no ping can arrive before it).
    const told = acceptedBy(sockets);
    if (told) await told;
    await greet(sockets, connection, ctx, plain, onConnect);
  } catch (error) {
    console.error(`dokit: connection ${id} failed while opening; refusing it with ${CLOSE_OPEN_FAILED}`, error);
    observer?.error(installedOn(sockets), "connect", error, id, "connect:refused");
    // SAFETY: its attachment is stored, so a plain socket becomes a Connection here.
    return refuse(sockets, asConnection(server) as Connection, client, accepted);
  }
  observer?.emit("lifecycle", installedOn(sockets), "connect", { connectionId: id, began: at });
  return new Response(null, { status: 101, webSocket: client });
}

/** @returns the connection id the client asked for (`_pk`) or a new one; `undefined` when the asked one is too long */
export function connectionId(request: Request, url = new URL(request.url)): string | undefined {
  const id = url.searchParams.get(CONNECTION_ID_PARAM) || crypto.randomUUID();
  return id.length > MAX_ID_LENGTH ? undefined : id;
}

/**
 * @returns a new connection's flags, at their defaults until decide() changes them. The page's
 *   Origin is kept for other capabilities (McpClients), at most 256 characters (real ones are
 *   short, a cut one matches no origin); `at` only where events are installed.
 */
export function connectionFlags(id: string, pub: string | undefined, request: Request, at?: number): ConnectionFlags {
  return { id, pub, tags: [id], uri: request.url, readonly: false, protocol: true, at, origin: request.headers.get("origin")?.slice(0, 256) };
}

/**
 * Makes the options' per-connection decisions (tags, readonly, protocol) and stores them in
 * the attachment, which already holds the defaults (written again only when one differs).
 * @returns the tags to accept the socket with
 */
export async function decide(sockets: WebSockets, connection: Connection, ctx: ConnectionContext): Promise<string[]> {
  const options = sockets[OPTIONS];
  const served = servedBy(sockets, ctx.request).length;
  const tags = connectionTags(connection.id, options.getConnectionTags ? await options.getConnectionTags(connection, ctx) : [], served);
  const readonly = (await options.readonly?.(connection, ctx)) === true;
  // A connection of a plug-in's own wire never speaks the protocol: it could not read a JSON frame.
  const protocol = served ? false : typeof options.protocol === "function" ? (await options.protocol(connection, ctx)) !== false : true;
  if (tags.length > 1 || readonly || !protocol) updateFlags(connection, { tags, readonly, protocol });
  return tags;
}

/** @returns the runtime tags of the plug-ins whose own wire an upgrade is for (their `serves`, plugin.ts): the connection is tagged with them */
export function servedBy(sockets: WebSockets, request: Request): string[] {
  const tags: string[] = [];
  for (const plugin of sockets[PLUGINS]) if (plugin.serves?.(request)) tags.push(pluginTag(plugin.pluginName));
  return tags;
}

/**
 * Whether a connection can open without becoming a Connection: nothing in its connect sequence
 * receives it (no per-connection decision, no `onConnect`, no frame another capability adds,
 * no events installed). A socket made a Connection (its prototype changed, its attachment kept
 * on it) keeps its JavaScript object alive while the object is awake, about 0.2 KB of heap per
 * connection (bench/README.md, "isolate heap per connection"); a plain socket becomes a
 * Connection on its first event instead, as after a wake.
 * @param onConnect - the handler sets that define `onConnect`
 */
function isPlain(sockets: WebSockets, onConnect: readonly WebSocketHandlers[]): boolean {
  const options = sockets[OPTIONS];
  const dispatch = dispatchOf(sockets);
  return !(
    onConnect.length ||
    options.getConnectionTags ||
    options.readonly ||
    typeof options.protocol === "function" ||
    sockets[PLUGINS].some((plugin) => plugin.serves) ||
    dispatch.observer ||
    dispatch.connectFrameSources[0]
  );
}

/**
 * Tells the plug-ins a socket was accepted (plugin.ts `accepted`): each is called in the turn of the
 * accept, then their promises are awaited together.
 */
function acceptedBy(sockets: WebSockets): Promise<unknown> | undefined {
  let pending: Promise<unknown>[] | undefined;
  for (const plugin of sockets[PLUGINS]) {
    const result = plugin.accepted?.();
    if (result) (pending ??= []).push(result);
  }
  return pending && Promise.all(pending);
}

/**
 * Closes the open connection with this id, if any (4009 `Connection replaced`): a client that
 * reconnects with its id (`_pk`) before the object noticed its old socket drop replaces it.
 * One lookup in the platform's tag index, made once per upgrade.
 */
function replace(sockets: WebSockets, id: string): void {
  replaceSocket(sockets, id);
  sockets[LIVE]?.get(id)?.close(CLOSE_REPLACED, REPLACED_REASON);
}

/** Closes the open hibernating connection with this id, if any (see replace). */
export function replaceSocket(sockets: WebSockets, id: string): void {
  for (const connection of taggedSockets(sockets, idTag(id))) closeConnection(sockets, connection, CLOSE_REPLACED, REPLACED_REASON);
}

/**
 * Sends the connect frames (out of broadcasts meanwhile), then runs the handler sets' `onConnect`.
 * A plain socket (see isPlain) speaks the protocol (its flags are not read) and has no `onConnect` to run.
 */
export function greet(
  sockets: WebSockets,
  connection: Connection,
  ctx: ConnectionContext,
  plain: boolean,
  onConnect: readonly WebSocketHandlers[],
): Promise<void> | undefined {
  sockets[CONNECTING] = connection;
  try {
    if (sockets[OPTIONS].protocol !== false && (plain || flagsOf(connection).protocol)) connectFrames(sockets, connection);
  } finally {
    sockets[CONNECTING] = undefined;
  }
  return runHandlers(sockets, connection, onConnect, (handlers) => handlers.onConnect?.(connection, ctx), ctx.request);
}

/**
 * Answers an upgrade whose connect sequence failed: the client gets a socket
 * that is already closed with 4500.
 *
 * workerd completes a server-initiated close of a hibernatable socket only
 * when it is issued inside a WebSocket event (`webSocketMessage`, …): closed
 * from `fetch`, a timer or an alarm, the client receives the close frame and
 * answers it, but its TCP connection is never shut, so the client hangs in
 * CLOSING. A non-hibernating socket closed in `fetch` completes at once. So
 * the failed socket never reaches the client: it is closed and drained here
 * (its client end is accepted in-process, so the object lists it no more),
 * and the upgrade is answered with a fresh non-hibernating socket closed
 * with 4500, which every client reports promptly.
 */
function refuse(sockets: WebSockets, connection: Connection, client: WebSocket, accepted: boolean): Response {
  (sockets[REFUSED] ??= new WeakSet()).add(connection);
  if (accepted) {
    client.accept();
    closeConnection(sockets, connection, CLOSE_OPEN_FAILED, OPEN_FAILED_REASON);
  }
  return refuseUpgrade(CLOSE_OPEN_FAILED, OPEN_FAILED_REASON);
}
