import { DokitError } from "../lifecycle/errors";

/** The platform's limits on hibernation tags. */
export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 256;

/**
 * Checks `[id, ...userTags]` against the platform's limits (at most 10 tags,
 * each a non-empty string of at most 256 characters).
 * @returns the tags to accept the socket with
 * @throws DokitError INVALID_TAGS stating the limits and showing what was returned
 */
export function connectionTags(id: string, userTags: unknown): string[] {
  const tags: unknown[] = Array.isArray(userTags) ? [id, ...userTags] : [];
  if (!tags.length || tags.length > MAX_TAGS || tags.some((tag) => typeof tag !== "string" || !tag || tag.length > MAX_TAG_LENGTH)) {
    throw new DokitError(
      "INVALID_TAGS",
      `getConnectionTags must return an array of at most ${MAX_TAGS - 1} non-empty strings of at most ${MAX_TAG_LENGTH} ` +
        `characters; got ${JSON.stringify(userTags)?.slice(0, 80)}`,
    );
  }
  // SAFETY: every element was just checked to be a string.
  return tags as string[];
}
