import { DokitError } from "../lifecycle/errors";
import type { WebSocketsErrorCode } from "./errors";

/** The platform's limits on hibernation tags. */
export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 256;

// The client chooses its connection id (`_pk`), so the id never becomes a tag of its own in the
// runtime's tag list: it is stored as ID_TAG_PREFIX + id, a prefix that user tags may not start
// with. An id can then never equal a tag from getConnectionTags (`_pk=role:admin` is not in
// `getConnections("role:admin")`), and getConnection(id) finds exactly one socket by its tag.
// `connection.tags` shows `[id, ...userTags]`, as it always did; only the runtime's list differs.

// A plug-in that serves an upgrade (its `serves(request)`, plugin.ts: Yjs at its path) gets the
// connection tagged for it when the socket is accepted, in a second reserved namespace: tags are
// fixed at accept, and its fan-out then reads the platform's tag index (`getWebSockets(tag)`)
// instead of walking every connection. Those tags are no user's either, and `connection.tags`
// does not show them.

/** The prefix of the id's tag in the runtime's tag list; user tags may not start with it. */
const ID_TAG_PREFIX = "_pk:";
/** The prefix of a plug-in's tag in the runtime's tag list; user tags may not start with it. */
const PLUGIN_TAG_PREFIX = "_plugin:";
/** The longest connection id: its tag (prefix and id) must fit the platform's tag length. */
export const MAX_ID_LENGTH = MAX_TAG_LENGTH - ID_TAG_PREFIX.length;

/** @returns the runtime tag that holds a connection's id */
export function idTag(id: string): string {
  return ID_TAG_PREFIX + id;
}

/** @returns the runtime tag of the connections a plug-in serves (a plug-in that serves upgrades needs a `pluginName` of at most 248 characters) */
export function pluginTag(pluginName: string): string {
  return PLUGIN_TAG_PREFIX + pluginName;
}

/** @returns whether `tag` is in a reserved namespace, the id's or the plug-ins' (so no user tag can be it) */
export function isReservedTag(tag: string): boolean {
  return tag.startsWith(ID_TAG_PREFIX) || tag.startsWith(PLUGIN_TAG_PREFIX);
}

/**
 * Checks the tags `getConnectionTags` returned against the platform's limits (with the id and the
 * tags of the plug-ins that serve the connection, at most 10 tags, each a non-empty string of at
 * most 256 characters) and the reserved namespaces.
 * @param served - how many plug-ins serve the connection (each adds its tag)
 * @returns the connection's tags as `connection.tags` shows them: `[id, ...userTags]`
 * @throws DokitError INVALID_TAGS stating the limits and showing what was returned
 */
export function connectionTags(id: string, userTags: unknown, served = 0): string[] {
  const tags: unknown[] = Array.isArray(userTags) ? [id, ...userTags] : [];
  if (
    !tags.length ||
    tags.length + served > MAX_TAGS ||
    tags.some((tag, index) => typeof tag !== "string" || !tag || tag.length > MAX_TAG_LENGTH || (index > 0 && isReservedTag(tag)))
  ) {
    throw new DokitError<WebSocketsErrorCode>(
      "INVALID_TAGS",
      `getConnectionTags must return an array of at most ${MAX_TAGS - 1 - served} non-empty strings of at most ${MAX_TAG_LENGTH} ` +
        `characters, none starting with "${ID_TAG_PREFIX}" or "${PLUGIN_TAG_PREFIX}"; got ${JSON.stringify(userTags)?.slice(0, 80)}`,
    );
  }
  // SAFETY: every element was just checked to be a string.
  return tags as string[];
}

/**
 * @returns the tags a socket is accepted with: the id's tag, then the user's tags (`tags` as
 *   {@link connectionTags} returns them), then the tags of the plug-ins that serve it
 */
export function runtimeTags(tags: readonly string[], served: readonly string[] = []): string[] {
  // SAFETY: connectionTags always returns the id first.
  return [idTag(tags[0] as string), ...tags.slice(1), ...served];
}
