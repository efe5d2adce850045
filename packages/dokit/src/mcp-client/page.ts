// The page the OAuth callback answers when no redirect URL is configured: it
// tells the opener and closes the popup. No user input is echoed into it.

/** @returns the small HTML page that ends an authorization popup */
export function callbackPage(ok: boolean): Response {
  const text = ok ? "Authorized. You can close this window." : "Authorization failed. You can close this window.";
  const html = `<!doctype html><meta charset="utf-8"><title>${ok ? "Authorized" : "Authorization failed"}</title><p>${text}</p><script>try{window.opener&&window.opener.postMessage({type:"mcp-oauth",ok:${ok}},"*")}catch(e){}window.close()</script>`;
  return new Response(html, {
    status: ok ? 200 : 400,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}

/** @returns a 302 to `location` with no caching */
export function redirectTo(location: string): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}
