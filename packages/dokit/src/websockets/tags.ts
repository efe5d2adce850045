import { DokitError } from "../lifecycle/errors";

/** The platform's limits on hibernation tags. */
export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 256;

/**
 * Checks `[id, ...userTags]` against the platform's limits (at most 10 tags,
 * each a non-empty string of at most 256 characters).
 * @returns the tags to accept the socket with
 * @throws DokitError INVALID_TAGS naming the offending tag
 */
export function connectionTags(id: string, userTags: unknown): string[] {
  if (!Array.isArray(userTags)) {
    throw new DokitError("INVALID_TAGS", "getConnectionTags must return an array of strings");
  }
  const tags = [id, ...userTags];
  if (tags.length > MAX_TAGS) {
    throw new DokitError(
      "INVALID_TAGS",
      `a connection may have at most ${MAX_TAGS} tags including its id; getConnectionTags returned ${userTags.length}`,
    );
  }
  for (const tag of tags) {
    if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH) {
      throw new DokitError(
        "INVALID_TAGS",
        `every tag must be a non-empty string of at most ${MAX_TAG_LENGTH} characters; got ${JSON.stringify(tag)?.slice(0, 80)}`,
      );
    }
  }
  return tags;
}
