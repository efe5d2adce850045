/** What a query parameter's value is shown as when the Inspector hides it. */
const REDACTED = "redacted";

/**
 * Hides the values of a URL's query parameters, keeping their names: upgrade URLs often carry
 * tokens (`?token=…`), and the Inspector's page and snapshot should not show them.
 * @returns `uri` with every query value replaced by {@link REDACTED}, or `null` for `null`; a value
 *   that does not parse as a URL keeps nothing after its `?`
 */
export function redactQuery(uri: string | null): string | null {
  if (uri === null) return null;
  const query = uri.indexOf("?");
  if (query < 0) return uri;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri.slice(0, query)}?${REDACTED}`;
  }
  if (!url.search) return uri;
  const names = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=${REDACTED}`);
  url.search = names.join("&");
  url.hash = "";
  return url.href;
}
