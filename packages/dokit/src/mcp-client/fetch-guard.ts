// What a server connection may fetch and which error texts it may show. Every URL
// (the server, its OAuth endpoints, redirects) passes the URL policy; redirects stay
// within the request's origin and method; an announced body over the limit is refused.
// An error text is shown only when dokit wrote it or the fetch itself failed: an
// SDK's text may quote a fetched body.

import type { FetchLike } from "@modelcontextprotocol/client";
import { DokitError, errorMessage } from "../lifecycle/errors";

/** An error whose message dokit wrote from what it knows (origins, limits, states), never from a fetched body. */
export class ConnectionError extends Error {}

/** Errors the fetch itself threw (no connection, TLS, aborted): there was no response, so no body in their text. */
const fetchFailures = new WeakSet<object>();

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** What one transport's fetch is guarded by. */
export interface FetchGuard {
  /** The fetch underneath (McpClients' `fetch` option, else the global one). */
  readonly base: FetchLike;
  /** The server's endpoint (a GET to it is the standalone notification stream). */
  readonly serverUrl: string;
  /** Whether the server was added in local development (the URL policy's `local`). */
  readonly local: boolean;
  /** Whether the notification stream may be opened; when not, its GET is answered 405 here. */
  readonly listen: boolean;
  /** Ends every request of the attempt. */
  readonly abort: AbortController;
  readonly maxResponseBytes: number;
  /** @returns why the URL may not be fetched, or `undefined` */
  refusal(url: URL, local: boolean): string | undefined;
  /** Notes an error status a server or OAuth endpoint answered (`<origin> answered HTTP <status>`). */
  status(text: string): void;
}

/**
 * @returns the fetch a transport uses: every URL is checked against the URL policy, requests end when the
 *   attempt is aborted, and an announced body larger than `maxResponseBytes` is refused. Redirects are
 *   followed here only within the origin and method of the request (as the client SDK's own fetch does),
 *   so the headers the request carries (`Authorization` with the user's or the OAuth token, `add()`'s
 *   headers) never reach another origin.
 */
export function guardedFetch(guard: FetchGuard): FetchLike {
  const { base, local, abort, maxResponseBytes } = guard;
  return async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    const refusal = guard.refusal(url, local);
    if (refusal) throw new ConnectionError(`fetching ${url.origin} is not allowed: ${refusal}`);
    // The standalone notification stream (a GET to the server URL): declined when listening is off.
    const method = (init?.method ?? "GET").toUpperCase();
    if (!guard.listen && method === "GET" && url.href === new URL(guard.serverUrl).href) {
      return new Response(null, { status: 405 });
    }
    const signal = init?.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const request: RequestInit = { ...init, signal, redirect: "manual" };
    let response = await noted(base, url, request);
    for (let hops = 0; REDIRECTS.has(response.status); hops++) {
      const location = response.headers.get("location");
      if (location === null) break;
      await response.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      const refused = hops >= MAX_REDIRECTS ? `more than ${MAX_REDIRECTS} redirects` : (guard.refusal(next, local) ?? redirectRefusal(url, next, method, response.status));
      if (refused) throw new ConnectionError(`the redirect of ${url.origin} to ${next.origin} is not allowed: ${refused}`);
      url = next;
      response = await noted(base, url, request);
    }
    if (!response.ok) guard.status(`${url.origin} answered HTTP ${response.status}`);
    const length = Number(response.headers.get("content-length") ?? 0);
    if (length > maxResponseBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new ConnectionError(`the response of ${url.origin} is ${length} bytes, more than the ${maxResponseBytes} allowed`);
    }
    return response;
  };
}

/** @returns `fetch(url, init)`, its failure noted in {@link fetchFailures} */
async function noted(fetch: FetchLike, url: URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (error !== null && typeof error === "object") fetchFailures.add(error);
    throw error;
  }
}

/** @returns why a redirect (already allowed by the URL policy) is not followed, or `undefined` to follow it */
function redirectRefusal(from: URL, to: URL, method: string, status: number): string | undefined {
  if (to.origin !== from.origin) return "redirects to another origin are not followed (the request's credentials would go there); use the target as the server's URL if you trust it";
  if ((to.username || to.password) && (to.username !== from.username || to.password !== from.password)) return "a redirect may not change the URL's credentials";
  if (method !== "GET" && status !== 307 && status !== 308) return `a ${status} redirect would turn the ${method} into a GET`;
  return undefined;
}

/**
 * @returns the text of the first error in `error`'s cause chain that may be shown as it is (dokit's
 *   own messages, and what the fetch itself threw), or `undefined` when there is none
 */
export function showableText(error: unknown): string | undefined {
  // The SDK wraps what the fetch threw (a refusal, a limit, a lost connection, a TLS failure) as `cause`.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    if (cause instanceof ConnectionError || cause instanceof DokitError || fetchFailures.has(cause)) return errorMessage(cause) || "unknown error";
  }
  return undefined;
}

/** @returns `work`, or a rejection after `ms` (the attempt's controller is aborted then) */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string, abort?: AbortController): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort?.abort();
      reject(new ConnectionError(`timed out after ${ms} ms ${what}`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => timer !== undefined && clearTimeout(timer));
}
